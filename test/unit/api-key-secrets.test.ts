import { describe, expect, it } from 'vitest';
import { allowlistEntryProblem, toAllowlist } from '#shared/api-keys/authenticate.ts';
import { generateKeyPair, hashSecret, secretMatches } from '#shared/api-keys/secrets.ts';

const PEPPER = 'unit-pepper-0123456789abcdef0123456789';

describe('API key pairs', () => {
  it('have a recognisable public key and a prefixed secret of at least 32 random bytes', () => {
    const { apiKey, apiSecret } = generateKeyPair();
    expect(apiKey).toMatch(/^pk_[0-9a-f]{32}$/);
    expect(apiSecret).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(apiSecret.slice(3), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(generateKeyPair().apiSecret).not.toBe(apiSecret);
  });

  it('are stored as an HMAC that depends on the pepper and never contains the secret', () => {
    const { apiSecret } = generateKeyPair();
    const hash = hashSecret(apiSecret, PEPPER);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(apiSecret.slice(3, 13));
    expect(hashSecret(apiSecret, `${PEPPER}x`)).not.toBe(hash);
  });

  it('match only the right secret with the right pepper', () => {
    const { apiSecret } = generateKeyPair();
    const hash = hashSecret(apiSecret, PEPPER);
    expect(secretMatches(apiSecret, hash, PEPPER)).toBe(true);
    expect(secretMatches(`${apiSecret}x`, hash, PEPPER)).toBe(false);
    expect(secretMatches(apiSecret.slice(0, -1), hash, PEPPER)).toBe(false);
    expect(secretMatches(apiSecret, hash, `${PEPPER}x`)).toBe(false);
    expect(secretMatches(apiSecret, 'abcd', PEPPER)).toBe(false);
    expect(secretMatches(apiSecret, '', PEPPER)).toBe(false);
  });
});

describe('IP allowlists', () => {
  it('match IPv4 and IPv6 blocks and single addresses', () => {
    const list = toAllowlist(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    expect(list.check('203.0.113.200', 'ipv4')).toBe(true);
    expect(list.check('203.0.114.1', 'ipv4')).toBe(false);
    expect(list.check('198.51.100.7', 'ipv4')).toBe(true);
    expect(list.check('198.51.100.8', 'ipv4')).toBe(false);
    expect(list.check('2001:db8:1::5', 'ipv6')).toBe(true);
    expect(list.check('2001:db9::1', 'ipv6')).toBe(false);
  });

  const MALFORMED = [
    'not-an-ip',
    '203.0.113.0/33',
    '203.0.113.0/',
    '2001:db8::/129',
    '1.2.3/8',
    '10.0.0.0/x',
  ];
  // Typos a number would forgive: a space, a leading zero, a second prefix; and a zone.
  const TYPOS = ['1.2.3.4/24 ', '127.0.0.5/032', '1.2.3.4/08', '1.2.3.4/24/8', 'fe80::1%eth0'];

  it.each([...MALFORMED, ...TYPOS])('refuses %s for storing', (cidr) => {
    expect(allowlistEntryProblem(cidr)).toEqual(expect.any(String));
  });

  it.each(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32', '0.0.0.0/0', '::/0'])('stores %s', (cidr) => {
    expect(allowlistEntryProblem(cidr)).toBeUndefined();
  });

  it.each(MALFORMED)('cannot read %s', (cidr) => {
    expect(() => toAllowlist([cidr])).toThrow();
  });

  it('still reads entries stored before the stricter check, as they were read then', () => {
    const list = toAllowlist(['127.0.0.5/032', '10.1.0.0/016']);
    expect(list.check('127.0.0.5', 'ipv4')).toBe(true);
    expect(list.check('127.0.0.6', 'ipv4')).toBe(false);
    expect(list.check('10.1.200.3', 'ipv4')).toBe(true);
  });
});
