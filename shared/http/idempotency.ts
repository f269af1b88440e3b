import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ValidationError } from '#shared/errors.ts';
import { headerValues } from '#shared/http/validation.ts';

/**
 * The `Idempotency-Key` header of a POST that is not idempotent by itself (API.md is silent; Stripe
 * takes one on every POST, and so do we where a retry after a lost answer would make a second
 * thing): the same key again within 24 hours answers what the first request answered, without doing
 * it twice; with another request it is 409 `duplicate_reference`. Only a request that succeeded is
 * remembered: a refused one can be sent again with the same key.
 */

/** How long a key is remembered (Stripe's 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;

/** The longest key taken (Stripe's 255). */
export const IDEMPOTENCY_KEY_MAX = 255;

/** Printable ASCII, spaces inside only: what a header carries unchanged through every proxy. */
const KEY = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const FIELD = 'headers.Idempotency-Key';

/** The request's `Idempotency-Key`, if sent; a malformed or repeated one is a 400, never ignored. */
export function idempotencyKeyOf(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
): string | undefined {
  const sent =
    headerValues(event.headers, event.multiValueHeaders, ['idempotency-key'])['idempotency-key'] ?? [];
  if (sent.length === 0) return undefined;
  const refuse = (message: string) =>
    new ValidationError([{ field: FIELD, message }], 'Invalid Idempotency-Key');
  if (sent.length > 1) throw refuse('Given more than once');
  const [key = ''] = sent;
  if (key.length === 0) throw refuse('Must not be empty');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw refuse(`At most ${IDEMPOTENCY_KEY_MAX} characters`);
  if (!KEY.test(key)) throw refuse('Printable ASCII characters only, no leading or trailing space');
  return key;
}
