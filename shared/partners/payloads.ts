import { createHash } from 'node:crypto';
import { ValidationError } from '#shared/errors.ts';
import { type KeySpan, scanJson } from '#shared/json.ts';
import type { DeliveryUnusable, DomainEvent, PartnerName } from '#shared/partners/partner.ts';
import { cutText } from '#shared/text.ts';

/**
 * Reading partners' webhook payloads, for every adapter: strict on the fields that move money,
 * loose on what a person reads (API.md §11). A cosmetic field (a sender's name, a narration, a
 * timestamp) is cut or dropped, never a reason to refuse a payment; a delivery whose money fields
 * cannot be read is kept for operators with the reason, never dropped.
 */

export type Json = Record<string, unknown>;

/**
 * A verified delivery's body, read: its JSON (as `JSON.parse` reads it: a key given twice takes its
 * last value), and why the money it names cannot be read as written, if it cannot (`ambiguity`):
 * an `amount` written with a fraction that `JSON.parse` rounds into a whole number
 * (`1000.0000000000000001` reads as 1000), or more keys given twice than are compared. A fraction
 * elsewhere is cosmetic and never blocks a credit.
 */
export interface DeliveryJson {
  json: unknown;
  ambiguity: string | undefined;
  /**
   * With keys given twice in one object: the body read with each other value of each such key in
   * turn (the rest as `json`), and the reason to keep the delivery should any reading name other
   * money than `json` does (`readUnambiguously`).
   */
  otherValues?: { readings: unknown[]; reason: string };
}

/** Reads a verified body; throws `ValidationError` (400) only when it is not JSON at all. */
export function readDeliveryJson(rawBody: string): DeliveryJson {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new ValidationError([{ field: 'body', message: 'Body is not valid JSON' }], 'Malformed JSON body');
  }
  const { duplicates, repeatedKeys, complete, roundedFractions } = scanJson(rawBody);
  const roundedAmounts = roundedFractions.filter((path) => path.split('.').at(-1) === 'amount');
  const duplicated = `duplicate key: ${duplicates.join(', ')}`;
  if (roundedAmounts.length > 0) {
    const rounded = `amount with a fraction: ${roundedAmounts.join(', ')} (JSON.parse would round it to a whole number)`;
    return { json, ambiguity: duplicates.length > 0 ? `${duplicated}; ${rounded}` : rounded };
  }
  if (duplicates.length === 0) return { json, ambiguity: undefined };
  if (!complete) return { json, ambiguity: `${duplicated}, and more (too many to compare)` };
  const readings = repeatedKeys.flatMap((occurrences) =>
    occurrences.slice(0, -1).map((kept) =>
      readWithout(
        rawBody,
        occurrences.filter((occurrence) => occurrence !== kept),
      ),
    ),
  );
  return {
    json,
    ambiguity: undefined,
    otherValues: { readings, reason: `${duplicated} (its values name different money)` },
  };
}

/** What a key a reading drops is renamed to (then removed by the reviver): no partner's key. */
const DROPPED = '\u0000dropped:';

/** The body parsed with the keys at `spans` dropped, their values with them. */
function readWithout(rawBody: string, spans: readonly KeySpan[]): unknown {
  let text = '';
  let from = 0;
  for (const [n, [start, end]] of [...spans].sort(([a], [b]) => a - b).entries()) {
    text += `${rawBody.slice(from, start)}${JSON.stringify(`${DROPPED}${n}`)}`;
    from = end + 1;
  }
  text += rawBody.slice(from);
  return JSON.parse(text, (key, value: unknown) => (key.startsWith(DROPPED) ? undefined : value));
}

/**
 * What a verified delivery says (`read`, given the body's JSON and the reason it cannot be acted on,
 * if any). With a key given twice, the delivery is read once for each value of each such key: the
 * same money every way (a narration or a sender's name given twice, which never blocks a credit,
 * API.md §11), the reading of `JSON.parse`'s values; otherwise it is read again with the duplicate
 * as the reason to keep it for operators.
 */
export function readUnambiguously<T extends { deliveryId: string; events: DomainEvent[] }>(
  body: DeliveryJson,
  read: (json: unknown, ambiguity: string | undefined) => T,
): T {
  const reading = read(body.json, body.ambiguity);
  const { otherValues } = body;
  if (!otherValues) return reading;
  const money = moneyOf(reading);
  const same = otherValues.readings.every((json) => moneyOf(read(json, undefined)) === money);
  return same ? reading : read(body.json, otherValues.reason);
}

/**
 * What moves money in a reading, as comparable text: the delivery's id and each event's ids,
 * accounts, amounts and outcome; never a name, narration, time or reason a person reads.
 */
function moneyOf({ deliveryId, events }: { deliveryId: string; events: DomainEvent[] }): string {
  return JSON.stringify([deliveryId, events.map(decisiveOf)]);
}

/** One event's fields that move money (`moneyOf`). */
function decisiveOf(event: DomainEvent): unknown[] {
  const { type, partner } = event;
  if (type === 'PaymentReceived') {
    return [type, partner, event.payment_id, event.account_ids, event.account_number, event.amount];
  }
  if (type === 'PaymentRejected') {
    return [type, partner, event.attempt_id, event.account_ids, event.alias_ids, event.amount];
  }
  if (type === 'TransferSettled') {
    const { outcome } = event;
    return [type, partner, event.reference, outcome.status, 'amount' in outcome ? outcome.amount : undefined];
  }
  return [type, partner, event.partner_event, event.partner_id];
}

/** Characters of a kept body stored with it (in the queued event and the operators' record). */
const KEPT_BODY_CHARS = 64 * 1024;

/**
 * The domain event of a signed delivery the service cannot act on, for operators: the reason, the
 * partner's ids where they could be read, and the body (the first 64 KiB, with the whole body's
 * size and SHA-256, so the queued message stays far below SQS's 256 KiB).
 */
export function unusableDelivery(
  partner: PartnerName,
  rawBody: string,
  reason: string,
  ids: { partnerEvent?: string | undefined; partnerId?: string | undefined } = {},
): DeliveryUnusable {
  return {
    type: 'DeliveryUnusable',
    partner,
    partner_event: ids.partnerEvent ?? null,
    partner_id: ids.partnerId ?? null,
    reason,
    body: cutText(rawBody, KEPT_BODY_CHARS),
    body_bytes: Buffer.byteLength(rawBody),
    body_sha256: sha256Hex(rawBody),
  };
}

/** An object, or undefined for anything else (arrays and null included). */
export function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

/** A non-blank string, trimmed and cut to `max` characters (code points); undefined for anything else. */
export function text(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed ? cutText(trimmed, max) : undefined;
}

/**
 * Text a person reads (a name, a narration): control characters become spaces, the bidirectional
 * overrides U+202D and U+202E too (the ones merchants' own text may not carry, `textSchema`: with
 * them a name reads backwards on the merchant's screen), a lone surrogate (half an emoji, which no
 * UTF-8 can carry) U+FFFD, then trimmed and cut to `max` characters; null when blank or not text.
 * Never a reason to refuse a payment.
 */
export function personText(value: unknown, max: number): string | null {
  const readable =
    typeof value === 'string'
      ? value.replace(/[\p{Cc}\u202D\u202E]/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD')
      : value;
  return text(readable, max) ?? null;
}

/** A CBN bank code (3 digits, or a 6-digit institution code); null for anything else. */
export function bankCodeOrNull(value: unknown): string | null {
  const code = text(value, 10);
  return code && /^(\d{3}|\d{6})$/.test(code) ? code : null;
}

/**
 * An ISO 8601 UTC timestamp from a partner's: kept as sent when it already is one, converted when
 * it has an offset, null when it is absent, not text, over 64 characters or unreadable.
 */
export function isoOrNull(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const time = Date.parse(value);
  if (!Number.isFinite(time)) return null;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(value)
    ? value
    : new Date(time).toISOString();
}

/** The SHA-256 of a text's UTF-8 bytes, in hex. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
