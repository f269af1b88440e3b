import * as z from 'zod/mini';
import { httpHandler } from '#shared/http/stack.ts';
import { amountSchema } from '#shared/money.ts';
import {
  accountNumberSchema,
  bankCodeSchema,
  opaqueIdSchema,
  referenceSchema,
  textSchema,
} from '#shared/schemas.ts';
import { toApiTransaction } from '#shared/transactions/store.ts';
import { createTransfer } from '#shared/transfers/transfers.ts';

const body = z.strictObject({
  reference: referenceSchema,
  amount: amountSchema,
  beneficiary_id: z.optional(opaqueIdSchema),
  session_id: z.optional(opaqueIdSchema),
  account_number: z.optional(accountNumberSchema),
  bank_code: z.optional(bankCodeSchema),
  narration: z.optional(textSchema(100)),
});

/** POST /transfers: idempotent on `reference`; 201 when created, 200 for a retry of the same body. */
export const handler = httpHandler('create-transfer', { body }, async ({ body, caller }) => {
  const { transaction, created } = await createTransfer(caller.merchantId, body);
  return {
    status: created ? 201 : 200,
    message: created ? 'Transfer created' : 'Transfer already exists',
    data: toApiTransaction(transaction),
  };
});
