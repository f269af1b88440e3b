import { describe, expect, it } from 'vitest';
import { sha256Base64url, sha256Hex } from '#shared/crypto/digest.ts';

describe('SHA-256 digests of text', () => {
  it('digests the UTF-8 bytes (FIPS 180-2 vector "abc"; a non-ASCII text as its bytes)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Base64url('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(sha256Hex('₦')).toBe(sha256Hex(Buffer.from('e282a6', 'hex').toString('utf8')));
  });
});
