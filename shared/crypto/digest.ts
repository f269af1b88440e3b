import { createHash } from 'node:crypto';

/** SHA-256 of a text's UTF-8 bytes, as 64 lowercase hex characters. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** SHA-256 of a text's UTF-8 bytes, as 43 base64url characters (a shorter key). */
export function sha256Base64url(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}
