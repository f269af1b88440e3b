import { listTransactionsRequest } from '#shared/contract/requests.ts';
import { ValidationError } from '#shared/errors.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { listTransactions, toApiTransaction } from '#shared/transactions/store.ts';

/** GET /transactions: newest first, filtered by type, status and date range, paginated. */
export const served = endpoint(listTransactionsRequest, async ({ query, caller }) => {
  if (query.from && query.to && query.from > query.to) {
    throw new ValidationError([{ field: 'query.from', message: 'Must not be after to' }]);
  }
  const page = await listTransactions(caller.merchantId, query);
  return {
    message: 'Transactions retrieved',
    data: page.items.map(toApiTransaction),
    meta: { next_cursor: page.nextCursor },
  };
});

export const handler = httpHandler('list-transactions', served);
