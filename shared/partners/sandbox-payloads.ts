import * as z from 'zod/mini';
import { ValidationError } from '#shared/errors.ts';
import { parseOrThrow } from '#shared/http/validation.ts';

// The sandbox partner's webhook payloads (API.md §4 `POST /webhooks/payments`). Read loosely:
// unknown fields are ignored, so a partner adding a field can never stop credits (API.md §1).
// Only what the service relies on is checked.

const sender = z.looseObject({
  account_name: z.optional(z.nullable(z.string().check(z.maxLength(200)))),
  account_number: z.optional(z.nullable(z.string().check(z.maxLength(20)))),
  bank_code: z.optional(z.nullable(z.string().check(z.maxLength(10)))),
});

export const paymentReceived = z.looseObject({
  type: z.literal('payment.received'),
  data: z.looseObject({
    session_id: z.string().check(z.minLength(1), z.maxLength(100)),
    account_number: z.string().check(z.regex(/^\d{10}$/, 'Must be exactly 10 digits')),
    amount: z.int().check(z.positive('Must be a positive number of kobo')),
    sender: z.optional(z.nullable(sender)),
    narration: z.optional(z.nullable(z.string().check(z.maxLength(500)))),
    paid_at: z.optional(z.nullable(z.string().check(z.maxLength(40)))),
  }),
});

export const transferSettled = z.looseObject({
  type: z.enum(['transfer.success', 'transfer.failed', 'transfer.reversed']),
  data: z.looseObject({
    reference: z.string().check(z.minLength(1), z.maxLength(200)),
    session_id: z.optional(z.nullable(z.string().check(z.maxLength(100)))),
    reason: z.optional(z.nullable(z.string().check(z.maxLength(500)))),
  }),
});

export type SandboxPaymentReceived = z.output<typeof paymentReceived>;
export type SandboxTransferSettled = z.output<typeof transferSettled>;
export type SandboxEvent = SandboxPaymentReceived | SandboxTransferSettled;

const EVENT_TYPES = ['payment.received', 'transfer.success', 'transfer.failed', 'transfer.reversed'];

/**
 * Reads a verified sandbox webhook body. Malformed JSON or a known event type with bad fields is a
 * 400; an event type the service does not know is `undefined` (accepted, nothing to do).
 */
export function parseSandboxEvent(rawBody: string): SandboxEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new ValidationError([{ field: 'body', message: 'Body is not valid JSON' }], 'Malformed JSON body');
  }
  const type = (json as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') throw new ValidationError([{ field: 'type', message: 'Required' }]);
  if (!EVENT_TYPES.includes(type)) return undefined;
  return type === 'payment.received'
    ? parseOrThrow(paymentReceived, json)
    : parseOrThrow(transferSettled, json);
}
