import { type ResolvedAccount, resolveAccount } from '#shared/accounts/resolve.ts';
import { accountOfSession } from '#shared/accounts/sessions.ts';
import { type FieldError, ValidationError } from '#shared/errors.ts';

/** The ways a request names a bank account. */
export interface AccountReference {
  session_id?: string;
  account_number?: string;
  bank_code?: string;
}

/** Whether a request names an account at all (either form, even half of one). */
export function namesAccount(request: AccountReference): boolean {
  return (
    request.session_id !== undefined ||
    request.account_number !== undefined ||
    request.bank_code !== undefined
  );
}

/**
 * The confirmed account a request names: this merchant's validation session, or account number and
 * bank code (checked and name-enquired). Both forms at once, or half of the second, is a 400.
 */
export async function accountNamedBy(
  merchantId: string,
  request: AccountReference,
): Promise<ResolvedAccount> {
  const byNumber = request.account_number !== undefined || request.bank_code !== undefined;
  if (request.session_id !== undefined && byNumber) {
    throw new ValidationError([
      { field: 'session_id', message: 'Give either session_id or account_number with bank_code, not both' },
    ]);
  }
  if (request.session_id !== undefined) return accountOfSession(merchantId, request.session_id);
  const missing: FieldError[] = (['account_number', 'bank_code'] as const)
    .filter((field) => request[field] === undefined)
    .map((field) => ({ field, message: 'Required (or give session_id instead)' }));
  if (missing.length > 0 || request.account_number === undefined || request.bank_code === undefined) {
    throw new ValidationError(missing);
  }
  return resolveAccount(request.bank_code, request.account_number);
}
