import { listVirtualAccountsRequest } from '#shared/contract/requests.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { listVirtualAccounts, toApiVirtualAccountSummary } from '#shared/payments/virtual-accounts.ts';

/** GET /virtual-accounts: newest first, optionally of one status, paginated. */
export const served = endpoint(listVirtualAccountsRequest, async ({ query, caller }) => {
  const page = await listVirtualAccounts(caller.merchantId, query);
  return {
    message: 'Virtual accounts retrieved',
    data: page.items.map((state) => toApiVirtualAccountSummary(state)),
    meta: { next_cursor: page.nextCursor },
  };
});

export const handler = httpHandler('list-virtual-accounts', served);
