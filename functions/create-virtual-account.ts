import { createVirtualAccountRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { createVirtualAccount } from '#shared/payments/virtual-account-opening.ts';
import { toApiVirtualAccount } from '#shared/payments/virtual-accounts.ts';

/** POST /virtual-accounts: a temporary account for a fixed amount; idempotent on `reference`. */
export const handler = httpHandler(
  'create-virtual-account',
  createVirtualAccountRequest,
  async ({ body, caller }) => {
    const merchant = await getMerchant(caller.merchantId);
    if (!merchant) throw new NotFound('Merchant');
    const { account, created } = await createVirtualAccount(caller.merchantId, merchant.name, body);
    return {
      status: created ? 201 : 200,
      message: created ? 'Virtual account created' : 'Virtual account already exists',
      data: toApiVirtualAccount(account),
    };
  },
);
