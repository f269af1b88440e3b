import { type Bank, bankOrder, listBanks } from '#shared/banks/index.ts';
import { BANK_LIST, pageOfPublic } from '#shared/pagination.ts';

/**
 * One page of `listBanks()` when a caller pages it (`?limit=`, `?cursor=`; API.md §1): up to `limit`
 * banks after the cursor's, whose position is the last bank's name and code.
 */
export function pageOfBanks(
  limit: number,
  cursor: string | undefined,
): { items: Bank[]; next_cursor: string | null } {
  return pageOfPublic(
    BANK_LIST,
    listBanks(),
    { keys: ['name', 'code'], positionOf: ({ name, code }) => ({ name, code }), compare: bankOrder },
    limit,
    cursor,
  );
}
