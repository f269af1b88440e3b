import * as z from 'zod/mini';
import { NotFound } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { getTransaction, toApiTransaction } from '#shared/transactions/store.ts';

const params = z.object({ reference: z.string() });

/** GET /transactions/{reference}: one of the caller's transactions; anyone else's is not found. */
export const handler = httpHandler('get-transaction', { params }, async ({ params, caller }) => {
  const transaction =
    params.reference.length <= 100 && (await getTransaction(caller.merchantId, params.reference));
  if (!transaction) throw new NotFound('Transaction');
  return { message: 'Transaction retrieved', data: toApiTransaction(transaction) };
});
