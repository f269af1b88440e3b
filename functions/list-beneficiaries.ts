import * as z from 'zod/mini';
import { listBeneficiaries } from '#shared/beneficiaries/store.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { cursorSchema, limitSchema } from '#shared/pagination.ts';

const query = z.strictObject({ limit: limitSchema, cursor: cursorSchema });

/** GET /beneficiaries: newest first, paginated. */
export const handler = httpHandler('list-beneficiaries', { query }, async ({ query, caller }) => {
  const page = await listBeneficiaries(caller.merchantId, query);
  return { message: 'Beneficiaries retrieved', data: page.items, meta: { next_cursor: page.nextCursor } };
});
