import { accountNamedBy } from '#shared/accounts/destination.ts';
import { saveBeneficiary } from '#shared/beneficiaries/store.ts';
import { createBeneficiaryRequest } from '#shared/contract/requests.ts';
import { httpHandler } from '#shared/http/stack.ts';

/** POST /beneficiaries: the name always comes from the partner (or this merchant's validation session). */
export const handler = httpHandler(
  'create-beneficiary',
  createBeneficiaryRequest,
  async ({ body, caller }) => {
    const account = await accountNamedBy(caller.merchantId, body);
    const { beneficiary, created } = await saveBeneficiary(caller.merchantId, account, body.nickname ?? null);
    return {
      status: created ? 201 : 200,
      message: created ? 'Beneficiary saved' : 'Beneficiary already saved',
      data: beneficiary,
    };
  },
);
