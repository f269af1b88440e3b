/** CBN NUBAN weights for the 15-digit form: 6-digit institution code + 9-digit serial. */
const WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3] as const;

/** The 6-digit institution code of a bank code: a 3-digit CBN code is `000` + code. */
function institutionCode(bankCode: string): string {
  if (/^\d{3}$/.test(bankCode)) return `000${bankCode}`;
  if (/^\d{6}$/.test(bankCode)) return bankCode;
  throw new RangeError(`bank code must have 3 or 6 digits, got ${JSON.stringify(bankCode)}`);
}

/** The NUBAN check digit of a 9-digit serial at a bank (API.md §5). */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  if (!/^\d{9}$/.test(serial)) throw new RangeError('serial must have 9 digits');
  const digits = institutionCode(bankCode) + serial;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * (WEIGHTS[i] ?? 0);
  return (10 - (sum % 10)) % 10;
}

/** The 10-digit NUBAN for a 9-digit serial at a bank. */
export function toNuban(bankCode: string, serial: string): string {
  return `${serial}${nubanCheckDigit(bankCode, serial)}`;
}

/** Whether a 10-digit account number carries the right check digit for the bank. */
export function isValidNuban(bankCode: string, accountNumber: string): boolean {
  if (!/^\d{10}$/.test(accountNumber)) return false;
  return toNuban(bankCode, accountNumber.slice(0, 9)) === accountNumber;
}
