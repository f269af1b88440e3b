import { listBeneficiaries } from '#shared/beneficiaries/store.ts';
import { listBeneficiariesRequest } from '#shared/contract/requests.ts';
import { httpHandler } from '#shared/http/stack.ts';

/** GET /beneficiaries: newest first, paginated. */
export const handler = httpHandler(
  'list-beneficiaries',
  listBeneficiariesRequest,
  async ({ query, caller }) => {
    const page = await listBeneficiaries(caller.merchantId, query);
    return { message: 'Beneficiaries retrieved', data: page.items, meta: { next_cursor: page.nextCursor } };
  },
);
