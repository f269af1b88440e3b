import * as z from 'zod/mini';
import { accountNamedBy } from '#shared/accounts/destination.ts';
import { saveBeneficiary } from '#shared/beneficiaries/store.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { accountNumberSchema, bankCodeSchema, opaqueIdSchema, textSchema } from '#shared/schemas.ts';

const body = z.strictObject({
  session_id: z.optional(opaqueIdSchema),
  account_number: z.optional(accountNumberSchema),
  bank_code: z.optional(bankCodeSchema),
  nickname: z.optional(textSchema(50)),
});

/** POST /beneficiaries: the name always comes from the partner (or this merchant's validation session). */
export const handler = httpHandler('create-beneficiary', { body }, async ({ body, caller }) => {
  const account = await accountNamedBy(caller.merchantId, body);
  const { beneficiary, created } = await saveBeneficiary(caller.merchantId, account, body.nickname ?? null);
  return {
    status: created ? 201 : 200,
    message: created ? 'Beneficiary saved' : 'Beneficiary already saved',
    data: beneficiary,
  };
});
