import { type Bank, bankOrder, listBanks } from '#shared/banks/index.ts';
import { BANK_LIST, decodeCursor, encodeCursor } from '#shared/pagination.ts';

/**
 * One page of `listBanks()` when a caller pages it (`?limit=`, `?cursor=`; API.md §1): up to `limit`
 * banks after the cursor's. The cursor holds the last bank's name and code, not its index, so a bank
 * added or removed by a deploy between pages skips or repeats none of the others.
 */
export function pageOfBanks(
  limit: number,
  cursor: string | undefined,
): { items: Bank[]; next_cursor: string | null } {
  const after = decodeCursor(cursor, BANK_LIST, ['name', 'code']) as Bank | undefined;
  const all = listBanks();
  const rest = after ? all.filter((bank) => bankOrder(after, bank) < 0) : all;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page,
    next_cursor:
      rest.length > limit && last ? encodeCursor(BANK_LIST, { name: last.name, code: last.code }) : null,
  };
}
