import { createTransferRequest } from '#shared/contract/requests.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { toApiTransaction } from '#shared/transactions/store.ts';
import { createTransfer } from '#shared/transfers/transfers.ts';

/** POST /transfers: idempotent on `reference`; 201 when created, 200 for a retry of the same body. */
export const handler = httpHandler('create-transfer', createTransferRequest, async ({ body, caller }) => {
  const { transaction, created } = await createTransfer(caller.merchantId, body);
  return {
    status: created ? 201 : 200,
    message: created ? 'Transfer created' : 'Transfer already exists',
    data: toApiTransaction(transaction),
  };
});
