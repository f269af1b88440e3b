import { beforeEach, describe, expect, it } from 'vitest';
import { authenticate, clearAuthCache } from '#shared/api-keys/authenticate.ts';
import { rollKey } from '#shared/api-keys/lifecycle.ts';
import { toApiKey } from '#shared/api-keys/registry.ts';
import { getApiKey, revokeApiKey, setAllowedIps } from '#shared/api-keys/store.ts';
import { isValidNuban } from '#shared/banks/nuban.ts';
import { config } from '#shared/config.ts';
import { Unauthorized } from '#shared/errors.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { aMerchant, anotherKey } from '#test/support/merchants.ts';

const IP = '198.51.100.20';
beforeEach(() => clearAuthCache());

const rejects = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(Unauthorized);

describe('authenticate', () => {
  it('accepts the right key and secret and names the merchant', async () => {
    const { merchant, apiKey, apiSecret } = await aMerchant();
    await expect(authenticate({ apiKey, apiSecret, sourceIp: IP })).resolves.toEqual({
      merchantId: merchant.merchant_id,
      apiKey,
    });
  });

  it('rejects missing, malformed and unknown credentials', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    await rejects(authenticate({ apiKey: undefined, apiSecret, sourceIp: IP }));
    await rejects(authenticate({ apiKey, apiSecret: undefined, sourceIp: IP }));
    await rejects(authenticate({ apiKey: '', apiSecret: '', sourceIp: IP }));
    await rejects(authenticate({ apiKey: 'pk_nothex', apiSecret, sourceIp: IP }));
    await rejects(authenticate({ apiKey: `pk_${'0'.repeat(32)}`, apiSecret, sourceIp: IP }));
    await rejects(authenticate({ apiKey, apiSecret: `sk_${'x'.repeat(300)}`, sourceIp: IP }));
  });

  it('never accepts a wrong secret, even right after the key was verified and cached', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    await authenticate({ apiKey, apiSecret, sourceIp: IP });
    // Another last character (a base64url secret's last character is 'A' one time in sixteen).
    const wrongLast = apiSecret.endsWith('A') ? 'B' : 'A';
    await rejects(authenticate({ apiKey, apiSecret: `${apiSecret.slice(0, -1)}${wrongLast}`, sourceIp: IP }));
    await rejects(authenticate({ apiKey, apiSecret: apiSecret.toUpperCase(), sourceIp: IP }));
  });

  it('stops accepting a revoked key once the cached record is older than AUTH_CACHE_SECONDS (≤ 60 s)', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const t0 = Date.now();
    await authenticate({ apiKey, apiSecret, sourceIp: IP }, t0);
    await revokeApiKey(apiKey);
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: IP }, t0 + config.authCacheSeconds * 1000));
    expect(config.authCacheSeconds).toBeLessThanOrEqual(60);
    clearAuthCache();
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: IP }));
  });

  it('refuses a rolled key from the expiry the roll set, within AUTH_CACHE_SECONDS (5 s) of a record cached before it', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const t0 = Date.now();
    // Cached with no expiry, then rolled to expire 2 s later.
    await authenticate({ apiKey, apiSecret, sourceIp: IP }, t0);
    await rollKey(apiKey, new Date(t0 + 2_000), { now: new Date(t0) });
    await expect(authenticate({ apiKey, apiSecret, sourceIp: IP }, t0 + 1_000)).resolves.toBeTruthy();
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: IP }, t0 + config.authCacheSeconds * 1000));
    expect(config.authCacheSeconds).toBe(5);
  });

  it('reads an allowlist stored before the stricter check, and refuses (401, not 500) one it cannot read', async () => {
    const legacy = await aMerchant();
    // Written past the lifecycle's check, as keys were stored before it.
    await setAllowedIps(legacy.apiKey, ['198.51.100.20/032']);
    await expect(
      authenticate({ apiKey: legacy.apiKey, apiSecret: legacy.apiSecret, sourceIp: IP }),
    ).resolves.toBeTruthy();
    const corrupt = await aMerchant();
    await setAllowedIps(corrupt.apiKey, ['not-an-address']);
    await rejects(authenticate({ apiKey: corrupt.apiKey, apiSecret: corrupt.apiSecret, sourceIp: IP }));
  });

  it('rejects an expired key and accepts one that expires later', async () => {
    const expired = await aMerchant({ expiresAt: new Date(Date.now() - 1000).toISOString() });
    await rejects(authenticate({ apiKey: expired.apiKey, apiSecret: expired.apiSecret, sourceIp: IP }));
    const later = await aMerchant({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await expect(
      authenticate({ apiKey: later.apiKey, apiSecret: later.apiSecret, sourceIp: IP }),
    ).resolves.toBeTruthy();
  });

  it('refuses a key from the very millisecond of its expiry, and lists it expired from then (API.md §10)', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const at = Date.parse(expiresAt);
    const { apiKey, apiSecret } = await aMerchant({ expiresAt });
    await expect(authenticate({ apiKey, apiSecret, sourceIp: IP }, at - 1)).resolves.toBeTruthy();
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: IP }, at));
    const record = await getApiKey(apiKey, { consistent: true });
    expect(record).toBeDefined();
    expect(toApiKey(record as NonNullable<typeof record>, at - 1).status).toBe('active');
    expect(toApiKey(record as NonNullable<typeof record>, at).status).toBe('expired');
  });

  it('accepts only addresses inside the allowlist, IPv4 and IPv6', async () => {
    const { apiKey, apiSecret } = await aMerchant({ allowedIps: ['203.0.113.0/24', '2001:db8::/48'] });
    await expect(authenticate({ apiKey, apiSecret, sourceIp: '203.0.113.9' })).resolves.toBeTruthy();
    await expect(authenticate({ apiKey, apiSecret, sourceIp: '2001:db8:0:1::9' })).resolves.toBeTruthy();
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: '203.0.114.9' }));
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: '2001:db9::1' }));
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: undefined }));
  });

  it('refuses an IPv4 client outside the IPv4 entries, whatever IPv6 block the list also holds', async () => {
    // "This range, or any IPv6": 127.0.0.1's mapped form ::ffff:127.0.0.1 lies in ::/0 (it was let in).
    const { apiKey, apiSecret } = await aMerchant({ allowedIps: ['203.0.113.0/24', '::/0'] });
    await rejects(authenticate({ apiKey, apiSecret, sourceIp: '127.0.0.1' }));
    await expect(authenticate({ apiKey, apiSecret, sourceIp: '203.0.113.9' })).resolves.toBeTruthy();
    await expect(authenticate({ apiKey, apiSecret, sourceIp: '2001:db8::9' })).resolves.toBeTruthy();
  });

  it('records when a key was last used', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    expect((await getApiKey(apiKey))?.last_used_at).toBeUndefined();
    await authenticate({ apiKey, apiSecret, sourceIp: IP });
    expect(Date.parse((await getApiKey(apiKey))?.last_used_at ?? '')).toBeGreaterThan(Date.now() - 10_000);
  });

  it('gives a second key of the same merchant the same merchant', async () => {
    const first = await aMerchant();
    const second = await anotherKey(first.merchant.merchant_id);
    const caller = await authenticate({ apiKey: second.apiKey, apiSecret: second.apiSecret, sourceIp: IP });
    expect(caller.merchantId).toBe(first.merchant.merchant_id);
  });
});

describe('onboarding a merchant', () => {
  it('opens a wallet at balance 0 with a NUBAN of the partner bank, never issued twice', async () => {
    const merchants = await Promise.all(Array.from({ length: 5 }, () => aMerchant()));
    const numbers = merchants.map(({ merchant }) => merchant.account_number);
    expect(new Set(numbers).size).toBe(5);
    for (const { merchant } of merchants) {
      expect(isValidNuban(config.partner.bankCode, merchant.account_number)).toBe(true);
      expect(await getMerchant(merchant.merchant_id)).toMatchObject({ balance: 0, version: 0 });
    }
  });
});
