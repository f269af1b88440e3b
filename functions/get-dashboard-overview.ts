import { getDashboardOverviewRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { listTransactions, toApiTransaction } from '#shared/transactions/store.ts';

/** How many transactions the overview shows (the Transactions page has them all). */
const RECENT = 5;

/** GET /api/v1/dashboard/overview: balance, wallet and the latest transactions, in one call. */
export const handler = sessionHandler(
  'get-dashboard-overview',
  endpoint(getDashboardOverviewRequest, async ({ caller }) => {
    const [merchant, recent] = await Promise.all([
      getMerchant(caller.merchantId),
      listTransactions(caller.merchantId, { limit: RECENT }),
    ]);
    if (!merchant) throw new NotFound('Merchant');
    return {
      message: 'Overview retrieved',
      data: {
        merchant_id: merchant.merchant_id,
        name: merchant.name,
        account_number: merchant.account_number,
        account_name: merchant.account_name,
        balance: merchant.balance,
        currency: 'NGN',
        email: caller.user?.email ?? null,
        recent_transactions: recent.items.map(toApiTransaction),
      },
    };
  }),
);
