import * as v from 'valibot';
import { ValidationError } from '#shared/errors.ts';
import { parseOrThrow } from '#shared/http/validation.ts';
import { PAYMENT_ID, PAYMENT_ID_MAX, PAYMENT_ID_RULE } from '#shared/partners/partner.ts';
import {
  bankCodeOrNull,
  isoOrNull,
  personText,
  readDeliveryJson,
  record,
  text,
} from '#shared/partners/payloads.ts';
import { looseObject } from '#shared/schemas.ts';
import { cutText, isWellFormed } from '#shared/text.ts';

// The sandbox partner's webhook payloads (API.md §5), read as API.md §11 asks: the fields that move
// money (session id, receiving account, amount; a verdict's reference) are checked strictly; what a
// person reads is cut or dropped, never a reason to refuse a payment; unknown fields are ignored
// (API.md §1), so a partner adding a field can never stop credits.

/** A field that never blocks a payment: read by `read` when it is a string (or absent), else null. */
function cosmetic<T>(read: (value: string | null | undefined) => T | null, description: string) {
  return v.fallback(
    v.pipe(
      v.nullish(v.string()),
      v.metadata({ description: `${description}. Never refuses a payment.` }),
      v.transform(read),
    ),
    null,
  );
}

const personTextField = (max: number, what: string) =>
  cosmetic(
    (value) => personText(value, max),
    `${what}: cut to ${max} characters; a value that is not text is ignored`,
  );

const sender = v.fallback(
  v.pipe(
    v.nullish(
      looseObject({
        account_name: personTextField(200, "The payer's account name"),
        account_number: cosmetic(
          (value) => personText(value, 20),
          "The payer's account number: cut to 20 characters",
        ),
        bank_code: cosmetic(bankCodeOrNull, "The payer's bank code: ignored unless 3 or 6 digits"),
      }),
    ),
    v.metadata({
      description:
        'The payer, for people to read: a value that is not an object is ignored. Never refuses a payment.',
    }),
  ),
  null,
);

/**
 * An id is text: half a surrogate pair (`"\ud800"`) is none, and DynamoDB would store it as U+FFFD,
 * making two different ids one (`S\ud800` and `S\udbff`), the second payment a "duplicate".
 */
const wellFormed = v.check(isWellFormed, 'Must be well-formed text');

/**
 * How the ids of kept verdicts and refusals begin (`transfer:<reference>`, `rejected:<attempt>`):
 * never a payment's id, or a payment kept and returned under one would be taken for a verdict, and
 * a later delivery of it credited as well.
 */
const VERDICT_ID = /^(transfer|rejected):/;

export const paymentReceived = looseObject({
  type: v.literal('payment.received'),
  data: looseObject({
    session_id: v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(PAYMENT_ID_MAX),
      wellFormed,
      v.check((id) => !VERDICT_ID.test(id), 'Must not begin with transfer: or rejected:'),
      v.check((id) => VERDICT_ID.test(id) || PAYMENT_ID.test(id), PAYMENT_ID_RULE),
    ),
    account_number: v.pipe(v.string(), v.regex(/^[0-9]{10}$/, 'Must be exactly 10 digits')),
    amount: v.pipe(v.number(), v.safeInteger(), v.gtValue(0, 'Must be a positive number of kobo')),
    sender,
    narration: personTextField(500, 'What the payer wrote'),
    paid_at: cosmetic(isoOrNull, 'When the customer paid (ISO 8601); unreadable: the time it arrived'),
  }),
});

export const transferSettled = looseObject({
  type: v.picklist(['transfer.success', 'transfer.failed', 'transfer.reversed']),
  data: looseObject({
    reference: v.pipe(v.string(), v.minLength(1), v.maxLength(200), wellFormed),
    session_id: cosmetic((value) => text(value, 100) ?? null, 'The NIP session id, for people to read'),
    reason: personTextField(500, 'Why the transfer failed or was reversed'),
  }),
});

/**
 * The fields read only for people (the `cosmetic` ones above): a key given twice in them is read
 * with its last value, never a reason to keep a payment (`readDeliveryJson`).
 */
const SANDBOX_COSMETIC = ['data.sender', 'data.narration', 'data.paid_at', 'data.reason'] as const;

export type SandboxPaymentReceived = v.InferOutput<typeof paymentReceived>;
export type SandboxTransferSettled = v.InferOutput<typeof transferSettled>;
export type SandboxEvent = SandboxPaymentReceived | SandboxTransferSettled;

/** What a verified sandbox delivery says: an event, nothing for the service, or why it is unusable. */
export type SandboxReading =
  | { kind: 'event'; event: SandboxEvent }
  | { kind: 'ignored'; type: string }
  | { kind: 'unusable'; reason: string; type?: string; id?: string };

const EVENT_TYPES = ['payment.received', 'transfer.success', 'transfer.failed', 'transfer.reversed'];

/**
 * Reads a verified sandbox webhook body. Only a body that is not JSON throws (400); an event type
 * the service does not know is ignored; JSON the service cannot act on (a key given twice, no event
 * type, a money field it cannot read) is unusable, with the reason and the ids it could read.
 */
export function readSandboxDelivery(rawBody: string): SandboxReading {
  const { json, ambiguity } = readDeliveryJson(rawBody, SANDBOX_COSMETIC);
  const payload = record(json);
  const type = typeof payload?.type === 'string' ? payload.type : undefined;
  const data = record(payload?.data);
  // Ids exactly as a valid event would carry them, or none: a cut id could name another payment.
  const idIn = (value: unknown, max: number) =>
    typeof value === 'string' && value.length >= 1 && value.length <= max && isWellFormed(value)
      ? value
      : undefined;
  const reference = idIn(data?.reference, 200);
  const sessionId = idIn(data?.session_id, 100);
  const id =
    type === 'payment.received'
      ? sessionId && !VERDICT_ID.test(sessionId)
        ? sessionId
        : undefined
      : reference && type?.startsWith('transfer.')
        ? `transfer:${reference}`
        : undefined;
  const unusable = (reason: string): SandboxReading => ({
    kind: 'unusable',
    reason,
    ...(type ? { type: cutText(type, 100) } : {}),
    ...(id ? { id } : {}),
  });
  if (ambiguity) return unusable(ambiguity);
  if (!payload) return unusable('not an event: the body is not a JSON object');
  if (type === undefined) return unusable('not an event: no type');
  if (!EVENT_TYPES.includes(type)) return { kind: 'ignored', type };
  try {
    const event =
      type === 'payment.received' ? parseOrThrow(paymentReceived, json) : parseOrThrow(transferSettled, json);
    return { kind: 'event', event };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const problems = (error.details.errors ?? []).map(({ field, message }) => `${field}: ${message}`);
    return unusable(`${type} cannot be acted on: ${problems.join('; ')}`);
  }
}
