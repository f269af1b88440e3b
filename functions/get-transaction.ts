import { getTransactionRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { getTransaction, toApiTransaction } from '#shared/transactions/store.ts';

/** GET /transactions/{reference}: one of the caller's transactions; anyone else's is not found. */
export const handler = httpHandler('get-transaction', getTransactionRequest, async ({ params, caller }) => {
  const transaction =
    params.reference.length <= 100 && (await getTransaction(caller.merchantId, params.reference));
  if (!transaction) throw new NotFound('Transaction');
  return { message: 'Transaction retrieved', data: toApiTransaction(transaction) };
});
