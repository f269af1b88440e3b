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
    expect(list.allows('203.0.113.200')).toBe(true);
    expect(list.allows('203.0.114.1')).toBe(false);
    expect(list.allows('198.51.100.7')).toBe(true);
    expect(list.allows('198.51.100.8')).toBe(false);
    expect(list.allows('2001:db8:1::5')).toBe(true);
    expect(list.allows('2001:db9::1')).toBe(false);
  });

  it('match an IPv4 client by IPv4 entries, never by an IPv6 block that happens to contain its mapped form', () => {
    // "This IPv4 range, or any IPv6": an IPv4 client outside the range is refused (it was let in).
    for (const [v6, inside] of [
      ['::/0', '2001:db8::1'],
      ['::/1', '2001:db8::1'],
      ['::/64', '::2'],
      ['::/80', '::2'],
      ['::ffff:0:0/95', '::fffe:0:1'],
    ] as const) {
      const list = toAllowlist(['203.0.113.0/24', v6]);
      expect([v6, list.allows('127.0.0.1'), list.allows('203.0.113.9'), list.allows(inside)]).toEqual([
        v6,
        false,
        true,
        true,
      ]);
    }
    // Entries written as IPv4-mapped addresses name IPv4 clients.
    const mapped = toAllowlist(['::ffff:127.0.0.0/104', '::ffff:10.0.0.1']);
    expect(['127.9.9.9', '10.0.0.1', '10.0.0.2'].map((ip) => mapped.allows(ip))).toEqual([true, true, false]);
    // An IPv4 client seen as its mapped IPv6 address (a dual-stack socket) is that IPv4 client.
    const v4 = toAllowlist(['127.0.0.0/8', '2001:db8::/32']);
    expect(['::ffff:127.0.0.1', '::ffff:10.0.0.1', '::1'].map((ip) => v4.allows(ip))).toEqual([
      true,
      false,
      false,
    ]);
    expect(toAllowlist(['::/0']).allows('::ffff:127.0.0.1')).toBe(false);
    expect([undefined, '', 'nope'].map((ip) => v4.allows(ip))).toEqual([false, false, false]);
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
    expect(list.allows('127.0.0.5')).toBe(true);
    expect(list.allows('127.0.0.6')).toBe(false);
    expect(list.allows('10.1.200.3')).toBe(true);
  });
});
