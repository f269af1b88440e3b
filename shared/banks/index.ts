import { BANKS, type BankRecord } from '#shared/banks/data.ts';

export type { BankRecord } from '#shared/banks/data.ts';

/** A bank as the API shows it. */
export interface Bank {
  code: string;
  name: string;
}

const byCode = new Map(BANKS.map((bank) => [bank.code, bank]));

const sortedForApi: readonly Bank[] = [...BANKS]
  .sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }))
  .map(({ code, name }) => ({ code, name }));

/** Every supported bank, sorted by name, as `GET /banks` returns them. */
export function listBanks(): readonly Bank[] {
  return sortedForApi;
}

/** The bank with this CBN code, or undefined. */
export function findBank(code: string): BankRecord | undefined {
  return byCode.get(code);
}
