import { BANKS, type BankRecord } from '#shared/banks/data.ts';

export type { BankRecord } from '#shared/banks/data.ts';

/** A bank as the API shows it. */
export interface Bank {
  code: string;
  name: string;
}

const byCode = new Map(BANKS.map((bank) => [bank.code, bank]));

let sortedForApi: readonly Bank[] | undefined;

/**
 * Every supported bank, sorted by name, as `GET /banks` returns them. Sorted on first use with one
 * collator: `localeCompare` with options builds a collator per comparison, and sorting at module
 * load cost every function that imports the bank list about 7 ms of cold start.
 */
export function listBanks(): readonly Bank[] {
  sortedForApi ??= [...BANKS].map(({ code, name }) => ({ code, name })).sort(bankOrder);
  return sortedForApi;
}

let collator: Intl.Collator | undefined;

/** Where a bank sits in `listBanks()`'s order: by name as the list sorts it, then by code. */
export function bankOrder(a: Bank, b: Bank): number {
  collator ??= new Intl.Collator('en', { sensitivity: 'base' });
  return collator.compare(a.name, b.name) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
}

/** The bank with this CBN code, or undefined. */
export function findBank(code: string): BankRecord | undefined {
  return byCode.get(code);
}
