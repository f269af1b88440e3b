import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new key pair: the public `api_key` and the `api_secret` shown once. */
export function generateKeyPair(): { apiKey: string; apiSecret: string } {
  return {
    apiKey: `pk_${randomBytes(16).toString('hex')}`,
    apiSecret: `sk_${randomBytes(32).toString('base64url')}`,
  };
}

/** Whether `value` has the form of a key id (`generateKeyPair`'s `pk_` and 32 hex digits). */
export function isKeyId(value: string): boolean {
  return /^pk_[0-9a-f]{32}$/.test(value);
}

/** The only form in which a secret is stored: HMAC-SHA256 keyed with the server-side pepper. */
export function hashSecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest('hex');
}

/** Whether `secret` hashes to `storedHash`, compared in constant time. */
export function secretMatches(secret: string, storedHash: string, pepper: string): boolean {
  const presented = Buffer.from(hashSecret(secret, pepper), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
