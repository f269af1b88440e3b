import { getBalanceRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { getMerchant } from '#shared/merchants/store.ts';

/** GET /balance: the authenticated merchant's own wallet. */
export const handler = httpHandler('get-balance', getBalanceRequest, async ({ caller }) => {
  const merchant = await getMerchant(caller.merchantId);
  if (!merchant) throw new NotFound('Merchant');
  return {
    message: 'Balance retrieved',
    data: {
      account_number: merchant.account_number,
      account_name: merchant.account_name,
      balance: merchant.balance,
      currency: 'NGN',
      updated_at: merchant.updated_at,
    },
  };
});
