import * as z from 'zod/mini';
import { NotFound } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { amountSchema } from '#shared/money.ts';
import { createVirtualAccount, toApiVirtualAccount } from '#shared/payments/virtual-accounts.ts';
import { referenceSchema, textSchema } from '#shared/schemas.ts';

const body = z.strictObject({
  amount: amountSchema,
  reference: z.optional(referenceSchema),
  expires_in_minutes: z._default(
    z
      .int('Must be a whole number of minutes')
      .check(z.gte(5, 'Must be at least 5'), z.lte(1440, 'Must be at most 1440')),
    30,
  ),
  customer: z.optional(
    z.strictObject({
      name: textSchema(100).check(z.minLength(1, 'Must not be empty')),
      email: z.email('Must be an email address').check(z.maxLength(254)),
    }),
  ),
});

/** POST /virtual-accounts: a temporary account for a fixed amount; idempotent on `reference`. */
export const handler = httpHandler('create-virtual-account', { body }, async ({ body, caller }) => {
  const merchant = await getMerchant(caller.merchantId);
  if (!merchant) throw new NotFound('Merchant');
  const { account, created } = await createVirtualAccount(caller.merchantId, merchant.name, body);
  return {
    status: created ? 201 : 200,
    message: created ? 'Virtual account created' : 'Virtual account already exists',
    data: toApiVirtualAccount(account),
  };
});
