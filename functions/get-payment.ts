import { getPaymentRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { getVirtualAccount, paymentsOf, toApiPayment } from '#shared/payments/virtual-accounts.ts';

/** GET /payments/{reference}: status from the totals and the clock, and every payment received. */
export const served = endpoint(getPaymentRequest, async ({ params, caller }) => {
  const account =
    params.reference.length <= 100 && (await getVirtualAccount(caller.merchantId, params.reference));
  if (!account) throw new NotFound('Payment');
  const payments = await paymentsOf(caller.merchantId, account.reference);
  return { message: 'Payment retrieved', data: toApiPayment(account, payments) };
});

export const handler = httpHandler('get-payment', served);
