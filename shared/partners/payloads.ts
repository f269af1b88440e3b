import { sha256Hex } from '#shared/crypto/digest.ts';
import { ValidationError } from '#shared/errors.ts';
import { scanJson } from '#shared/json.ts';
import type { DeliveryUnusable, PartnerName } from '#shared/partners/partner.ts';
import { hasNoImpossibleIsoDate } from '#shared/schemas.ts';
import { cutText, cutUtf8 } from '#shared/text.ts';

/**
 * Reading partners' webhook payloads, for every adapter: strict on the fields that move money,
 * loose on what a person reads (API.md §11). A cosmetic field (a sender's name, a narration, a
 * timestamp) is cut or dropped, never a reason to refuse a payment; a delivery whose money fields
 * cannot be read is kept for operators with the reason, never dropped.
 */

export type Json = Record<string, unknown>;

/**
 * A verified delivery's body, read: its JSON, and why the money it names cannot be read as
 * written, if it cannot (`ambiguity`): a key given twice in one object, or a number written with a
 * fraction that `JSON.parse` rounds into a whole number (`1000.0000000000000001` reads as 1000; an
 * amount, an id), outside the fields the adapter reads only for people.
 */
export interface DeliveryJson {
  json: unknown;
  ambiguity: string | undefined;
}

/**
 * Reads a verified body; throws `ValidationError` (400) only when it is not JSON at all (a leading
 * byte order mark is ignored, as RFC 8259 allows).
 * `cosmetic`: the paths of the fields the adapter reads only for people (`data.narration`), where a
 * key given twice is read with its last value, as `JSON.parse` reads it, and a rounded number is
 * what it reads as: a cosmetic field never blocks a credit (API.md §11). Anywhere else either makes
 * the delivery ambiguous: another reader may take the other value, or the exact one, so its money
 * is never acted on.
 */
export function readDeliveryJson(rawBody: string, cosmetic: readonly string[] = []): DeliveryJson {
  const text = rawBody.startsWith('\uFEFF') ? rawBody.slice(1) : rawBody;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ValidationError([{ field: 'body', message: 'Body is not valid JSON' }], 'Malformed JSON body');
  }
  const { duplicates, roundedFractions, complete } = scanJson(text);
  const named = (paths: string[]) => paths.map(shownPath).join(', ');
  // Past 10 keys given twice or 10 rounded numbers the scan stops (bounded work for a hostile
  // body): what follows is unread, an amount among it maybe, so nothing of the body is acted on.
  if (!complete) {
    return {
      json,
      ambiguity: `more than 10 keys given twice or numbers JSON.parse rounds (${named([...duplicates, ...roundedFractions])}, …): not read further`,
    };
  }
  const decisive = (path: string) =>
    !cosmetic.some((field) => path === field || path.startsWith(`${field}.`));
  const ambiguous = duplicates.filter(decisive);
  const rounded = roundedFractions.filter(decisive);
  const ambiguity =
    ambiguous.length > 0
      ? `duplicate key: ${named(ambiguous)} (the payment, amount or account it names is ambiguous)`
      : rounded.length > 0
        ? `number with a fraction: ${named(rounded)} (JSON.parse would round it to a whole number)`
        : undefined;
  return { json, ambiguity };
}

/**
 * A path of the partner's keys as a reason shows it to operators: written as in JSON (a control
 * character, which would act on their terminal or start a false line, as its escape; line
 * separators and bidirectional controls too), and cut at 200 characters with `…` (a path is as long
 * as the keys above it).
 */
function shownPath(path: string): string {
  const escaped = JSON.stringify(path)
    .slice(1, -1)
    .replace(/[\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
  const cut = cutText(escaped, 199);
  return cut === escaped ? escaped : `${cut}…`;
}

/** Characters of a kept delivery's reason. */
const KEPT_REASON_CHARS = 2_000;

/**
 * Bytes (UTF-8) of a kept body stored with it (in the queued event and the operators' record): at
 * most twice that once escaped in the queued JSON, far below SQS's 256 KiB.
 */
const KEPT_BODY_BYTES = 64 * 1024;

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
    // Cut: a reason naming the body's paths grows with its keys (the queued message and the kept
    // record must stay far below SQS's 256 KiB and DynamoDB's 400 KB).
    reason: cutText(reason, KEPT_REASON_CHARS),
    body: cutUtf8(rawBody, KEPT_BODY_BYTES),
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
 * Text a person reads (a name, a narration): control characters become spaces, the line and
 * paragraph separators U+2028 and U+2029 and the bidirectional overrides U+202D and U+202E too (the
 * ones merchants' own text may not carry, `textSchema`: with the overrides a name reads backwards on
 * the merchant's screen), a lone surrogate (half an emoji, which no UTF-8 can carry) U+FFFD, then
 * trimmed and cut to `max` characters; null when blank or not text. Never a reason to refuse a
 * payment.
 */
export function personText(value: unknown, max: number): string | null {
  const readable =
    typeof value === 'string'
      ? value.replace(/[\p{Cc}\u2028\u2029\u202D\u202E]/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD')
      : value;
  return text(readable, max) ?? null;
}

/** A CBN bank code (3 digits, or a 6-digit institution code); null for anything else. */
export function bankCodeOrNull(value: unknown): string | null {
  const code = text(value, 10);
  return code && /^(\d{3}|\d{6})$/.test(code) ? code : null;
}

/**
 * An ISO 8601 UTC timestamp to the millisecond from a partner's (as every time we write: they are
 * compared as text, and `…:00Z` sorts after `…:00.500Z`), null when it is absent, not text, over 64
 * characters, unreadable, or naming no real time (`2026-02-30`, `T24:00`, which `Date.parse`
 * would move to another day).
 */
export function isoOrNull(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64 || !hasNoImpossibleIsoDate(value)) return null;
  const time = Date.parse(value);
  const iso = Number.isFinite(time) ? new Date(time).toISOString() : null;
  // A year past 9999 or before 0 (`+010000-…`) sorts as text before every four-digit one.
  return iso && /^\d{4}-/.test(iso) ? iso : null;
}
