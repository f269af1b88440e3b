import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks: how far a timestamp may be from now, either way. */
export const TOLERANCE_SECONDS = 5 * 60;

/** Longest `webhook-signature` header accepted: room for a handful of v1 signatures. */
const MAX_SIGNATURE_HEADER = 1024;

export interface SignedRequest {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  /** The raw body, exactly as received. */
  body: string;
}

/** `v1,<base64 HMAC-SHA256>` over `{id}.{timestamp}.{body}` (Standard Webhooks). */
export function sign(key: Buffer, id: string, timestamp: number | string, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Why a webhook's signature is not acceptable, or undefined when it is. Checks the headers' shape
 * and lengths before any crypto, the timestamp within ±5 minutes, then every `v1,` signature of the
 * header against every key (rotation), in constant time.
 */
export function signatureProblem(
  request: SignedRequest,
  keys: readonly Buffer[],
  now = Date.now(),
): string | undefined {
  const { id, timestamp, signature, body } = request;
  if (!id || !timestamp || !signature) return 'missing signature headers';
  if (id.length > 256 || signature.length > MAX_SIGNATURE_HEADER) return 'oversized signature headers';
  if (!/^\d{1,12}$/.test(timestamp)) return 'malformed timestamp';
  // Whole seconds, as the timestamp is: exactly 5 minutes either way is inside (a fractional now
  // made it about -300 to +301).
  if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > TOLERANCE_SECONDS) {
    return 'timestamp outside tolerance';
  }
  const presented = signature
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'))
    .filter((bytes) => bytes.length === 32);
  if (presented.length === 0) return 'no v1 signature of the right length';
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
    if (presented.some((candidate) => timingSafeEqual(candidate, expected))) return undefined;
  }
  return 'signature mismatch';
}
