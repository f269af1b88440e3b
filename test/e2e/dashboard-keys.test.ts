import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKey } from '#infra/dashboard/app/types.ts';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { clearAuthCache } from '#shared/api-keys/authenticate.ts';
import { MAX_USABLE_KEYS } from '#shared/api-keys/store.ts';
import { aDashboardUser } from '#test/support/dashboard.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';

const DASHBOARD = '/api/v1/dashboard';

/** A key as the dashboard API answers it: the web app's own type. */
type Key = ApiKey;

let gateway: LocalGateway;
let session: Record<string, string>;
let merchant: Awaited<ReturnType<typeof aMerchant>>;

const dashboard = (method: string, path: string, body?: unknown) =>
  call(gateway, method, `${DASHBOARD}${path}`, { headers: session, ...(body === undefined ? {} : { body }) });
/** GET /balance with a key pair, as an integrator's `curl` would; the authorizer's caches cleared. */
const balanceWith = async (key: Key) => {
  clearAuthCache();
  return (
    await call(gateway, 'GET', '/api/v1/developer/balance', {
      headers: { 'X-API-Key': key.api_key, 'X-API-Secret': key.api_secret ?? '' },
    })
  ).status;
};

beforeAll(async () => {
  gateway = await startTestGateway();
  merchant = await aMerchant();
  session = (await aDashboardUser(merchant.merchant.merchant_id)).headers;
});
afterAll(() => gateway.close());

describe('API keys in the dashboard (API.md §10)', () => {
  it('creates a key whose secret is shown once and works at once, and lists keys without secrets', async () => {
    const created = await dashboard('POST', '/keys');
    expect(created.status).toBe(201);
    const key = data<Key>(created);
    expect(key).toMatchObject({ status: 'active', allowed_ips: [], expires_at: null, revoked_at: null });
    expect(key.api_secret).toMatch(/^sk_/);
    expect(await balanceWith(key)).toBe(200);

    const listed = data<Key[]>(await dashboard('GET', '/keys'));
    const shown = listed.find((item) => item.api_key === key.api_key);
    expect(shown).toMatchObject({ status: 'active' });
    expect(shown?.last_used_at).toEqual(expect.any(String));
    const text = JSON.stringify(listed);
    expect(text).not.toContain(key.api_secret);
    expect(text).not.toContain('secret_hash');
    expect(listed.map((item) => item.api_key)).toContain(merchant.apiKey);
  });

  it("refuses a key past the merchant's limit of keys that work at once: 422 limit_reached, until one is revoked", async () => {
    const own = await aDashboardUser((await aMerchant()).merchant.merchant_id);
    const as = (method: string, path: string, body?: unknown) =>
      call(gateway, method, `${DASHBOARD}${path}`, {
        headers: own.headers,
        ...(body === undefined ? {} : { body }),
      });
    // The merchant's first key and nine more.
    for (let i = 1; i < MAX_USABLE_KEYS; i++) expect((await as('POST', '/keys')).status).toBe(201);
    const refused = await as('POST', '/keys');
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ status: 'error', code: 'limit_reached' });
    const last = data<Key[]>(await as('GET', '/keys'))[0] as Key;
    const rollKeepingOld = await as('POST', `/keys/${last.api_key}/roll`, {
      old_key_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect([rollKeepingOld.status, rollKeepingOld.body?.code]).toEqual([422, 'limit_reached']);
    // The web app's "Now": its clock's now plus a second, read as now.
    const rollNow = await as('POST', `/keys/${last.api_key}/roll`, {
      old_key_expires_at: new Date(Date.now() + 1_000).toISOString(),
    });
    expect(rollNow.status).toBe(201);
    expect((await as('POST', `/keys/${data<Key>(rollNow).api_key}/revoke`)).status).toBe(200);
    expect((await as('POST', '/keys')).status).toBe(201);
  });

  it('lists keys as every list (API.md §1): newest first, paged by limit and cursor, strict query', async () => {
    const own = await aDashboardUser((await aMerchant()).merchant.merchant_id);
    const as = (path: string, method = 'GET') =>
      call(gateway, method, `${DASHBOARD}${path}`, { headers: own.headers });
    const made = [data<Key>(await as('/keys', 'POST')), data<Key>(await as('/keys', 'POST'))];
    const first = await as('/keys?limit=2');
    // The two new keys, newest first (two made in one millisecond would be ordered by key id).
    const newest = data<Key[]>(first);
    expect(new Set(newest.map((k) => k.api_key))).toEqual(new Set(made.map((k) => k?.api_key)));
    expect((newest[0]?.created_at ?? '') >= (newest[1]?.created_at ?? '')).toBe(true);
    const cursor = (first.body as { meta: { next_cursor: string } }).meta.next_cursor;
    const rest = await as(`/keys?limit=2&cursor=${cursor}`);
    // The merchant's first key, from onboarding, is the oldest.
    expect(data<Key[]>(rest)).toHaveLength(1);
    expect(rest.body).toMatchObject({ meta: { next_cursor: null } });
    for (const bad of ['?limit=0', '?foo=1']) expect((await as(`/keys${bad}`)).status, bad).toBe(400);
  });

  it('rolls a key: both work until the chosen expiry, then only the new one', async () => {
    const key = data<Key>(await dashboard('POST', '/keys', { allowed_ips: ['127.0.0.1'] }));
    // Past ROLL_NOW_MS (2 s), which would be read as now.
    const expiresAt = new Date(Date.now() + 4_000).toISOString();
    const rolled = await dashboard('POST', `/keys/${key.api_key}/roll`, { old_key_expires_at: expiresAt });
    expect(rolled.status).toBe(201);
    const fresh = data<Key>(rolled);
    expect(fresh.api_key).not.toBe(key.api_key);
    expect(fresh.allowed_ips).toEqual(['127.0.0.1']);
    expect(fresh.rolled_key).toMatchObject({ api_key: key.api_key, expires_at: expiresAt, status: 'active' });
    expect([await balanceWith(key), await balanceWith(fresh)]).toEqual([200, 200]);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 100));
    expect([await balanceWith(key), await balanceWith(fresh)]).toEqual([401, 200]);
    const listed = data<Key[]>(await dashboard('GET', '/keys'));
    expect(listed.find((item) => item.api_key === key.api_key)?.status).toBe('expired');
  });

  it('refuses a roll past 7 days, of a revoked key, or of a key it does not know', async () => {
    const key = data<Key>(await dashboard('POST', '/keys'));
    const tooLate = new Date(Date.now() + 8 * 24 * 3_600_000).toISOString();
    const late = await dashboard('POST', `/keys/${key.api_key}/roll`, { old_key_expires_at: tooLate });
    expect(late.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'old_key_expires_at' }] });
    const notADate = await dashboard('POST', `/keys/${key.api_key}/roll`, {
      old_key_expires_at: '2026-02-30',
    });
    expect(notADate.body).toMatchObject({
      code: 'validation_error',
      errors: [{ field: 'old_key_expires_at' }],
    });
    expect((await dashboard('POST', `/keys/${key.api_key}/revoke`)).status).toBe(200);
    const soon = new Date(Date.now() + 60_000).toISOString();
    for (const apiKey of [key.api_key, 'pk_unknown', 'x'.repeat(300)]) {
      const refused = await dashboard('POST', `/keys/${apiKey}/roll`, { old_key_expires_at: soon });
      expect(refused.body, apiKey).toMatchObject({ code: 'not_found' });
    }
    // Nor is a revoked key's allowlist edited: it can never be used again.
    const ips = await dashboard('POST', `/keys/${key.api_key}/allowed-ips`, { allowed_ips: ['10.0.0.0/8'] });
    expect([ips.status, ips.body?.code]).toEqual([404, 'not_found']);
  });

  it('revokes a key: refused from then on, shown as revoked', async () => {
    const key = data<Key>(await dashboard('POST', '/keys'));
    expect(await balanceWith(key)).toBe(200);
    // No body or `{}`, as rotate-secret: anything else is refused and revokes nothing.
    const typo = await dashboard('POST', `/keys/${key.api_key}/revoke`, { reason: 'x' });
    expect(typo.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'reason' }] });
    const text = await call(gateway, 'POST', `${DASHBOARD}/keys/${key.api_key}/revoke`, {
      headers: { ...session, 'Content-Type': 'text/plain' },
      rawBody: 'hello',
    });
    expect(text.status).toBe(415);
    // A sent `null` is not an absent body: refused, and no key made or revoked by it.
    const before = data<Key[]>(await dashboard('GET', '/keys?limit=100')).length;
    for (const path of ['/keys', `/keys/${key.api_key}/revoke`]) {
      for (const rawBody of ['null', 'false', '0', '""']) {
        const sent = await call(gateway, 'POST', `${DASHBOARD}${path}`, {
          headers: { ...session, 'Content-Type': 'application/json' },
          rawBody,
        });
        expect(sent.body, `${path} ${rawBody}`).toMatchObject({
          code: 'validation_error',
          errors: [{ field: 'body' }],
        });
      }
    }
    expect(data<Key[]>(await dashboard('GET', '/keys?limit=100'))).toHaveLength(before);
    expect(await balanceWith(key)).toBe(200);
    const revoked = await dashboard('POST', `/keys/${key.api_key}/revoke`);
    expect(data<Key>(revoked)).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    expect(await balanceWith(key)).toBe(401);
  });

  it('edits the IP allowlist: another address is refused, an empty list allows any', async () => {
    const key = data<Key>(await dashboard('POST', '/keys'));
    const restricted = await dashboard('POST', `/keys/${key.api_key}/allowed-ips`, {
      allowed_ips: ['203.0.113.0/24'],
    });
    expect(data<Key>(restricted).allowed_ips).toEqual(['203.0.113.0/24']);
    expect(await balanceWith(key)).toBe(401);
    await dashboard('POST', `/keys/${key.api_key}/allowed-ips`, { allowed_ips: [] });
    expect(await balanceWith(key)).toBe(200);
    const bad = await dashboard('POST', `/keys/${key.api_key}/allowed-ips`, {
      allowed_ips: ['203.0.113.0/24', '300.1.2.3/8', '1.2.3.4/24 '],
    });
    // Each bad entry by its index, as the schema names an entry's errors (`allowed_ips.0`).
    expect(bad.body).toMatchObject({
      code: 'validation_error',
      errors: [{ field: 'allowed_ips.1' }, { field: 'allowed_ips.2' }],
    });
  });

  it('shows the overview: balance, wallet and the latest transactions', async () => {
    await fund(merchant.merchant.merchant_id, 100_000);
    const sent = await call(gateway, 'POST', '/transfers', {
      headers: merchant.headers,
      body: {
        reference: `ovw-${Date.now()}`,
        amount: 20_000,
        account_number: anAccount('058'),
        bank_code: '058',
      },
    });
    expect(sent.status).toBe(201);
    const overview = data<Record<string, unknown>>(await dashboard('GET', '/overview'));
    expect(overview).toMatchObject({
      merchant_id: merchant.merchant.merchant_id,
      account_number: merchant.merchant.account_number,
      balance: 100_000 - 20_000 - 1_000,
      currency: 'NGN',
    });
    expect(overview.recent_transactions).toEqual([
      expect.objectContaining({ reference: data(sent).reference, amount: 20_000, type: 'debit' }),
    ]);
  });
});
