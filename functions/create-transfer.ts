import { createTransferRequest } from '#shared/contract/requests.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { logger } from '#shared/logger.ts';
import { toApiTransaction } from '#shared/transactions/store.ts';
import { createTransfer } from '#shared/transfers/transfers.ts';

/** POST /transfers: idempotent on `reference`; 201 when created, 200 for a retry of the same body. */
export const handler = httpHandler('create-transfer', createTransferRequest, async ({ body, caller }) => {
  // On every line of this request, `request completed` included: which transfer, and (below) what
  // became of it, so on-call finds a merchant's transfer by its reference.
  logger.appendKeys({ reference: body.reference });
  const { transaction, created } = await createTransfer(caller.merchantId, body);
  logger.appendKeys({ transfer_status: transaction.status, created });
  return {
    status: created ? 201 : 200,
    message: created ? 'Transfer created' : 'Transfer already exists',
    data: toApiTransaction(transaction),
  };
});
