import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { clearAuthCache } from '#shared/api-keys/authenticate.ts';
import { revokeApiKey } from '#shared/api-keys/store.ts';
import { ECHO_ROUTE } from '#test/fixtures/routes.ts';
import { call, PROJECT_ROOT, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anotherKey } from '#test/support/merchants.ts';

const UNAUTHORIZED = { status: 'error', message: 'Invalid API credentials' };

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('authentication over HTTP', () => {
  it.each([
    ['no credentials', () => ({})],
    ['only the key', (m: Awaited<ReturnType<typeof aMerchant>>) => ({ 'X-API-Key': m.apiKey })],
    ['only the secret', (m: Awaited<ReturnType<typeof aMerchant>>) => ({ 'X-API-Secret': m.apiSecret })],
    [
      'an unknown key',
      (m: Awaited<ReturnType<typeof aMerchant>>) => ({
        'X-API-Key': `pk_${'a'.repeat(32)}`,
        'X-API-Secret': m.apiSecret,
      }),
    ],
    [
      'a wrong secret',
      (m: Awaited<ReturnType<typeof aMerchant>>) => ({
        'X-API-Key': m.apiKey,
        'X-API-Secret': `${m.apiSecret}x`,
      }),
    ],
    ['empty values', () => ({ 'X-API-Key': '', 'X-API-Secret': '' })],
  ])('%s → 401 with exactly the contract body', async (_label, headersOf) => {
    const merchant = await aMerchant();
    for (const [method, p] of [
      ['GET', '/balance'],
      ['POST', '/api/v1/developer/validate-account'],
    ] as const) {
      const response = await call(gateway, method, p, {
        headers: headersOf(merchant) as Record<string, string>,
      });
      expect(response.status).toBe(401);
      expect(response.body).toStrictEqual(UNAUTHORIZED);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('accepts the header names in any case', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    for (const [k, s] of [
      ['x-api-key', 'x-api-secret'],
      ['X-API-KEY', 'X-API-SECRET'],
      ['X-Api-Key', 'x-API-secret'],
    ]) {
      const response = await call(gateway, 'GET', '/balance', {
        headers: { [k as string]: apiKey, [s as string]: apiSecret },
      });
      expect(response.status).toBe(200);
    }
  });

  it('marks private answers and errors never to be stored by a cache', async () => {
    const merchant = await aMerchant();
    const balance = await call(gateway, 'GET', '/balance', { headers: merchant.headers });
    expect([balance.status, balance.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const refused = await call(gateway, 'GET', '/balance', {
      headers: { ...merchant.headers, 'X-API-Secret': 'sk_no' },
    });
    expect([refused.status, refused.headers.get('cache-control')]).toEqual([401, 'no-store']);
  });

  it('rejects a revoked key', async () => {
    const merchant = await aMerchant();
    expect((await call(gateway, 'GET', '/balance', { headers: merchant.headers })).status).toBe(200);
    await revokeApiKey(merchant.apiKey);
    // The gateway runs the handlers in this process: drop the cache instead of waiting 30 s.
    clearAuthCache();
    const response = await call(gateway, 'GET', '/balance', { headers: merchant.headers });
    expect(response.status).toBe(401);
    expect(response.body).toStrictEqual(UNAUTHORIZED);
  });

  it('rejects an expired key', async () => {
    const merchant = await aMerchant({ expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const response = await call(gateway, 'GET', '/balance', { headers: merchant.headers });
    expect(response.status).toBe(401);
    expect(response.body).toStrictEqual(UNAUTHORIZED);
  });

  it('lets a second key of the same merchant see the same wallet', async () => {
    const first = await aMerchant();
    const second = await anotherKey(first.merchant.merchant_id);
    const a = await call(gateway, 'GET', '/balance', { headers: first.headers });
    const b = await call(gateway, 'GET', '/balance', { headers: second.headers });
    expect(b.status).toBe(200);
    expect(b.body?.data).toEqual(a.body?.data);
  });

  it('takes the client IP from the connection: an allowlist that contains it passes', async () => {
    const merchant = await aMerchant({ allowedIps: ['127.0.0.0/8', '::1/128'] });
    const response = await call(gateway, 'GET', '/balance', { headers: merchant.headers });
    expect(response.status).toBe(200);
  });

  it('rejects a caller outside the allowlist, whatever X-Forwarded-For claims', async () => {
    const merchant = await aMerchant({ allowedIps: ['203.0.113.0/24'] });
    for (const forwarded of [undefined, '203.0.113.5', '203.0.113.5, 127.0.0.1']) {
      const headers = { ...merchant.headers, ...(forwarded ? { 'X-Forwarded-For': forwarded } : {}) };
      const response = await call(gateway, 'GET', '/balance', { headers });
      expect(response.status).toBe(401);
      expect(response.body).toStrictEqual(UNAUTHORIZED);
    }
  });

  it('keeps GET /banks open: no 401 with bad credentials either', async () => {
    const response = await call(gateway, 'GET', '/banks', {
      headers: { 'X-API-Key': 'junk', 'X-API-Secret': 'junk' },
    });
    expect(response.status).toBe(200);
  });
});

describe('the per-key rate limit', () => {
  it('answers request 101 within a minute with 429 and Retry-After, while another key still gets 200', async () => {
    const limited = await aMerchant();
    const other = await aMerchant();
    for (let i = 1; i <= 100; i++) {
      const response = await call(gateway, 'GET', '/balance', { headers: limited.headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('100');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
    }
    const refused = await call(gateway, 'GET', '/balance', { headers: limited.headers });
    expect(refused.status).toBe(429);
    expect(refused.body).toStrictEqual({
      status: 'error',
      message: 'Rate limit exceeded',
      code: 'rate_limited',
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-request-id')).toBeTruthy();
    // A public route never trusts a key header it does not verify: it counts per client IP.
    expect((await call(gateway, 'GET', '/banks', { headers: limited.headers })).status).toBe(200);

    const unaffected = await call(gateway, 'GET', '/balance', { headers: other.headers });
    expect(unaffected.status).toBe(200);
  });
});

describe('the partner webhook route', () => {
  it('is never rate limited', async () => {
    const hooks = await startTestGateway({
      rootDir: path.join(PROJECT_ROOT, 'test', 'fixtures'),
      routes: [{ ...ECHO_ROUTE, auth: 'webhook' }],
    });
    try {
      const statuses = [];
      for (let i = 0; i < 130; i++) {
        statuses.push((await call(hooks, 'POST', '/echo', { body: { amount: 1 } })).status);
      }
      expect(new Set(statuses)).toEqual(new Set([201]));
    } finally {
      await hooks.close();
    }
  });

  it('contrasts with a limited route on the same gateway build', async () => {
    const limited = await startTestGateway({
      rootDir: path.join(PROJECT_ROOT, 'test', 'fixtures'),
      routes: [ECHO_ROUTE],
    });
    try {
      const statuses = [];
      for (let i = 0; i < 101; i++)
        statuses.push((await call(limited, 'POST', '/echo', { body: { amount: 1 } })).status);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
