import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { OPENAPI_PATHS } from '#shared/definitions/routes.ts';
import { aDashboardUser } from '#test/support/dashboard.ts';
import { callFrom, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

/**
 * API.md §11 through the local gateway, which runs the same REQUEST authorizer as API Gateway and
 * then its usage plan: failed attempts count per client IP, never against the key presented.
 * Each test calls from its own loopback address, so each starts with an unspent IP.
 */
const UNAUTHORIZED = { status: 'error', message: 'Invalid API credentials' };
const RATE_LIMITED = { status: 'error', message: 'Rate limit exceeded', code: 'rate_limited' };
const inventedKey = () => `pk_${randomBytes(16).toString('hex')}`;

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('credential headers sent twice', () => {
  it('are a 401 whichever copy is the real one, and spend nothing of the key', async () => {
    const victim = await aMerchant();
    for (const apiKey of [
      ['junk', victim.apiKey],
      [victim.apiKey, 'junk'],
      [victim.apiKey, victim.apiKey],
    ]) {
      const response = await callFrom(gateway, '127.0.0.11', 'GET', '/balance', {
        'X-API-Key': apiKey,
        'X-API-Secret': victim.apiSecret,
      });
      expect(response.status).toBe(401);
      expect(response.body).toStrictEqual(UNAUTHORIZED);
    }
    const secrets = await callFrom(gateway, '127.0.0.11', 'GET', '/balance', {
      'X-API-Key': victim.apiKey,
      'X-API-Secret': ['wrong', victim.apiSecret],
    });
    expect(secrets.status).toBe(401);
    // Header names differ only in case: still the same header, twice.
    const mixedCase = await callFrom(gateway, '127.0.0.11', 'GET', '/balance', [
      'X-API-Key',
      victim.apiKey,
      'x-api-key',
      victim.apiKey,
      'X-API-Secret',
      victim.apiSecret,
    ]);
    expect(mixedCase.status).toBe(401);

    const honest = await callFrom(gateway, '127.0.0.11', 'GET', '/balance', victim.headers);
    expect(honest.status).toBe(200);
    expect(honest.headers['x-ratelimit-remaining']).toBe('99');
  });
});

describe('knowing a key id', () => {
  it('never locks its merchant out: the attacker is limited by IP, the merchant keeps all 100', async () => {
    const victim = await aMerchant();
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) {
      const response = await callFrom(gateway, '127.0.0.12', 'GET', '/balance', {
        'X-API-Key': victim.apiKey,
        'X-API-Secret': `wrong-${i}`,
      });
      statuses.push(response.status);
      if (i === 100) {
        expect(response.body).toStrictEqual(RATE_LIMITED);
        expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(60);
      }
    }
    expect(statuses.slice(0, 100)).toEqual(Array(100).fill(401));
    expect(statuses.slice(100)).toEqual(Array(10).fill(429));

    // The merchant, even from the attacker's own address, is limited per key only: all 100 left.
    const fromAttackerIp = await callFrom(gateway, '127.0.0.12', 'GET', '/balance', victim.headers);
    expect(fromAttackerIp.status).toBe(200);
    expect(fromAttackerIp.headers['x-ratelimit-remaining']).toBe('99');
    const fromElsewhere = await callFrom(gateway, '127.0.0.13', 'GET', '/balance', victim.headers);
    expect(fromElsewhere.status).toBe(200);
    expect(fromElsewhere.headers['x-ratelimit-remaining']).toBe('98');
  });
});

describe('invented key headers', () => {
  it('stay within the per-IP limit: a fresh key each time does not buy a fresh budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 105; i++) {
      const response = await callFrom(gateway, '127.0.0.14', 'GET', '/transactions', {
        'X-API-Key': inventedKey(),
        'X-API-Secret': 'whatever',
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 100)).toEqual(Array(100).fill(401));
    expect(statuses.slice(100)).toEqual(Array(5).fill(429));
    // Requests without any key share the same per-IP limit.
    const keyless = await callFrom(gateway, '127.0.0.14', 'GET', '/transactions');
    expect(keyless.status).toBe(429);
    // Another address is unaffected.
    const elsewhere = await callFrom(gateway, '127.0.0.15', 'GET', '/transactions', {
      'X-API-Key': inventedKey(),
      'X-API-Secret': 'whatever',
    });
    expect(elsewhere.status).toBe(401);
  });
});

describe('requests without a key and failed attempts', () => {
  const failedAttempt = (ip: string) =>
    callFrom(gateway, ip, 'GET', '/balance', { 'X-API-Key': inventedKey(), 'X-API-Secret': 'whatever' });

  it('share one per-IP limit: 100 failed attempts leave GET /banks nothing', async () => {
    for (let i = 0; i < 100; i++) expect((await failedAttempt('127.0.0.16')).status).toBe(401);
    const banks = await callFrom(gateway, '127.0.0.16', 'GET', '/banks');
    expect(banks.status).toBe(429);
    expect(banks.body).toStrictEqual(RATE_LIMITED);
    expect(Number(banks.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(banks.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(banks.headers['x-ratelimit-remaining']).toBe('0');
    expect(banks.headers['x-request-id']).toBeTruthy();
    expect(banks.headers['content-type']).toBe('application/json; charset=utf-8');
    // Another address still has all of its limit.
    const elsewhere = await callFrom(gateway, '127.0.0.17', 'GET', '/banks');
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers['x-ratelimit-limit']).toBe('100');
    expect(elsewhere.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('include requests no route answers (404, 405), whatever credential headers they carry, as WAF counts them on AWS', async () => {
    const ip = '127.0.0.19';
    const invented = () => ({ 'X-API-Key': inventedKey(), 'X-API-Secret': 'whatever' });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await callFrom(gateway, ip, 'GET', `/nope-${i}`)).status);
    for (let i = 0; i < 25; i++)
      statuses.push((await callFrom(gateway, ip, 'GET', `/nope-${i}`, invented())).status);
    for (let i = 0; i < 25; i++)
      statuses.push(
        (await callFrom(gateway, ip, 'PUT', '/transfers', { 'X-API-Key': inventedKey() })).status,
      );
    for (let i = 0; i < 25; i++)
      statuses.push((await callFrom(gateway, ip, 'DELETE', '/balance', invented())).status);
    expect(statuses).toEqual([...Array(50).fill(404), ...Array(50).fill(405)]);
    // An invented key never escapes the IP's limit (API.md §11): on an unknown path, a deeper one,
    // a served one with a trailing slash (a failed attempt), another method, a path containing the
    // partner webhook's, an unserved path of the dashboard's API.
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/transactions/ref_1/more'],
      ['GET', '/balance/'],
      ['GET', '/nope/webhooks/paystack'],
      ['DELETE', '/balance'],
      ['GET', '/api/v1/dashboard/nope'],
    ] as const) {
      const over = await callFrom(gateway, ip, method, path, invented());
      expect(over.status, `${method} ${path}`).toBe(429);
      expect(over.body).toStrictEqual(RATE_LIMITED);
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The IP's failed attempts share it: spent.
    expect((await failedAttempt(ip)).status).toBe(429);
    // A request no route answers verifies no credentials, so valid ones are counted there too (a
    // merchant's typo in a path); on a served route they are limited per key only, and the
    // partner webhook's paths are never limited.
    const merchant = await aMerchant();
    expect((await callFrom(gateway, ip, 'GET', '/balances', merchant.headers)).status).toBe(429);
    expect((await callFrom(gateway, ip, 'GET', '/balance', merchant.headers)).status).toBe(200);
    // An unsigned delivery: refused by the webhook's own check, never by the limit.
    const delivery = await callFrom(gateway, ip, 'POST', '/webhooks/payments');
    expect(delivery.status).toBe(401);
    // Another method there, a CORS preflight (no route answers OPTIONS): counted.
    expect((await callFrom(gateway, ip, 'GET', '/webhooks/payments')).status).toBe(429);
    expect((await callFrom(gateway, ip, 'OPTIONS', '/balance')).status).toBe(429);
    // The OpenAPI document is API Gateway's answer on AWS, behind WAF: counted, so refused here.
    for (const path of OPENAPI_PATHS) expect((await callFrom(gateway, ip, 'GET', path)).status).toBe(429);
    // The dashboard's files (CloudFront's on AWS, a file it lacks too) are not the API's: never counted.
    expect((await callFrom(gateway, ip, 'GET', '/dashboard/secrets.json')).status).toBe(404);
  });

  it('share it the other way too: 100 GET /banks leave failed attempts nothing, valid keys untouched', async () => {
    for (let i = 1; i <= 100; i++) {
      const banks = await callFrom(gateway, '127.0.0.18', 'GET', '/banks');
      expect(banks.status).toBe(200);
      expect(banks.headers['x-ratelimit-remaining']).toBe(String(100 - i));
    }
    const attempt = await failedAttempt('127.0.0.18');
    expect(attempt.status).toBe(429);
    expect(attempt.body).toStrictEqual(RATE_LIMITED);
    // A refused request is not counted, and valid credentials are limited per key only.
    expect((await callFrom(gateway, '127.0.0.18', 'GET', '/banks')).status).toBe(429);
    const merchant = await aMerchant();
    const valid = await callFrom(gateway, '127.0.0.18', 'GET', '/balance', merchant.headers);
    expect(valid.status).toBe(200);
    // With a trailing slash too: the same route, as API Gateway (REST) routes it.
    const slashed = await callFrom(
      gateway,
      '127.0.0.18',
      'GET',
      '/api/v1/developer/balance/',
      merchant.headers,
    );
    expect(slashed.status).toBe(200);
    expect(slashed.body?.data).toEqual(valid.body?.data);
  });
});

describe('dashboard sign-in', () => {
  const SIGN_IN = '/api/v1/dashboard/sessions';
  const wrongPassword = { email: 'nobody@example.ng', password: 'Wrong-pass-1!' };

  it("shares the client IP's count with failed API key attempts: spent by one, refused to the other", async () => {
    for (let i = 0; i < 100; i++) {
      const failed = await callFrom(gateway, '127.0.0.21', 'GET', '/balance', {
        'X-API-Key': inventedKey(),
        'X-API-Secret': 'nope',
      });
      expect(failed.status).toBe(401);
    }
    const signIn = await callFrom(gateway, '127.0.0.21', 'POST', SIGN_IN, {}, wrongPassword);
    expect(signIn.status).toBe(429);
    expect(signIn.body).toStrictEqual(RATE_LIMITED);
    expect(Number(signIn.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const challenge = await callFrom(
      gateway,
      '127.0.0.21',
      'POST',
      `${SIGN_IN}/challenge`,
      {},
      {
        email: 'nobody@example.ng',
        challenge: 'SOFTWARE_TOKEN_MFA',
        session: 'made-up',
        code: '123456',
      },
    );
    expect(challenge.status).toBe(429);
  });

  it("counts every sign-in of an address, so that guessing passwords spends the failed attempts' limit", async () => {
    const victim = await aMerchant();
    for (let i = 0; i < 100; i++) {
      const guessed = await callFrom(gateway, '127.0.0.22', 'POST', SIGN_IN, {}, wrongPassword);
      expect(guessed.status).toBe(401);
      expect(guessed.headers['x-ratelimit-remaining']).toBe(String(99 - i));
    }
    expect((await callFrom(gateway, '127.0.0.22', 'POST', SIGN_IN, {}, wrongPassword)).status).toBe(429);
    const invented = await callFrom(gateway, '127.0.0.22', 'GET', '/balance', {
      'X-API-Key': inventedKey(),
      'X-API-Secret': 'nope',
    });
    expect(invented.body).toStrictEqual(RATE_LIMITED);
    // Valid credentials are limited per key only, whatever the address has spent.
    expect((await callFrom(gateway, '127.0.0.22', 'GET', '/balance', victim.headers)).status).toBe(200);
  });
});

describe('dashboard sessions', () => {
  it("limit each signed-in user to 100 requests a minute (docs/dashboard-api.md), a colleague's untouched", async () => {
    const { merchant } = await aMerchant();
    const [one, two] = await Promise.all([
      aDashboardUser(merchant.merchant_id),
      aDashboardUser(merchant.merchant_id),
    ]);
    const keys = (user: { headers: Record<string, string> }) =>
      callFrom(gateway, '127.0.0.23', 'GET', '/api/v1/dashboard/keys?limit=1', user.headers);
    for (let i = 0; i < 100; i++) {
      const listed = await keys(one);
      expect(listed.status).toBe(200);
      expect(listed.headers['x-ratelimit-remaining']).toBe(String(99 - i));
    }
    const refused = await keys(one);
    expect(refused.status).toBe(429);
    expect(refused.body).toStrictEqual(RATE_LIMITED);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Counted per user, not per merchant or address: a colleague at the same address still works.
    expect((await keys(two)).status).toBe(200);
  });
});
