import { accountNamedBy } from '#shared/accounts/destination.ts';
import { saveBeneficiary, savedBeneficiary } from '#shared/beneficiaries/store.ts';
import { createBeneficiaryRequest } from '#shared/contract/requests.ts';
import { PartnerUnavailable } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';

/** POST /beneficiaries: the name always comes from the partner (or this merchant's validation session). */
export const handler = httpHandler(
  'create-beneficiary',
  createBeneficiaryRequest,
  async ({ body, caller }) => {
    let account: Awaited<ReturnType<typeof accountNamedBy>>;
    try {
      account = await accountNamedBy(caller.merchantId, body);
    } catch (error) {
      // A retry whose name enquiry failed (the partner timed out this time) while the first request
      // saved the account: answered with it, never with a 503 saying nothing was saved. Only then:
      // a refusal (the account closed, the bank no longer paid, a malformed body) is said as ever.
      const { account_number: number, bank_code: bank } = body;
      const saved =
        error instanceof PartnerUnavailable && number !== undefined && bank !== undefined
          ? await savedBeneficiary(caller.merchantId, bank, number).catch(() => undefined)
          : undefined;
      if (!saved) throw error;
      return { status: 200, message: 'Beneficiary already saved', data: saved };
    }
    const { beneficiary, created } = await saveBeneficiary(caller.merchantId, account, body.nickname ?? null);
    return {
      status: created ? 201 : 200,
      message: created ? 'Beneficiary saved' : 'Beneficiary already saved',
      data: beneficiary,
    };
  },
);
