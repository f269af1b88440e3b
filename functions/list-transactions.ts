import * as z from 'zod/mini';
import { ValidationError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { cursorSchema, limitSchema } from '#shared/pagination.ts';
import { listTransactions, toApiTransaction } from '#shared/transactions/store.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO date or date-time; a bare date means the start (`from`) or the end (`to`) of that day. */
const bound = (end: 'start' | 'end') =>
  z.optional(
    z.pipe(
      z.string().check(
        z.refine((value) => (DATE.test(value) || DATE_TIME.test(value)) && !Number.isNaN(Date.parse(value)), {
          message: 'Must be an ISO 8601 date or date-time',
        }),
      ),
      z.transform((value) =>
        DATE.test(value)
          ? `${value}T${end === 'start' ? '00:00:00.000' : '23:59:59.999'}Z`
          : new Date(value).toISOString(),
      ),
    ),
  );

const query = z.strictObject({
  type: z.optional(z.enum(['credit', 'debit'])),
  status: z.optional(z.enum(['pending', 'success', 'failed', 'reversed'])),
  from: bound('start'),
  to: bound('end'),
  limit: limitSchema,
  cursor: cursorSchema,
});

/** GET /transactions: newest first, filtered by type, status and date range, paginated. */
export const handler = httpHandler('list-transactions', { query }, async ({ query, caller }) => {
  if (query.from && query.to && query.from > query.to) {
    throw new ValidationError([{ field: 'query.from', message: 'Must not be after to' }]);
  }
  const page = await listTransactions(caller.merchantId, query);
  return {
    message: 'Transactions retrieved',
    data: page.items.map(toApiTransaction),
    meta: { next_cursor: page.nextCursor },
  };
});
