import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { API_PREFIX, ROUTES, type Route, servedPaths } from '#shared/definitions/routes.ts';
import { aDashboardUser, forgedCopy, reclaimedCopy, unsignedCopy } from '#test/support/dashboard.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';

/**
 * The isolation matrix for the dashboard (API.md §10): a user of merchant A calls every session
 * route with every identifier of merchant B's (key, webhook endpoint, event, virtual account) and
 * sees nothing of B's; an API key is refused by every session route, a session by every api_key
 * route. Routes are taken from the route table: a new dashboard route without a case here fails.
 */

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type User = Awaited<ReturnType<typeof aDashboardUser>>;

let gateway: LocalGateway;
let a: Merchant;
let b: Merchant;
let userA: User;
let userB: User;
let ids: { apiKey: string; endpoint: string; event: string; virtualAccount: string };
let secrets: string[];

const SESSION_ROUTES = (ROUTES as readonly Route[]).filter(
  (route) => route.dashboard && route.auth === 'session',
);
const API_KEY_ROUTES = (ROUTES as readonly Route[]).filter((route) => route.auth === 'api_key');
/** A JSON body where the method takes one. */
const bodyFor = (route: Route) => (route.method === 'GET' ? {} : { body: {} });

/** A concrete path of a route, its parameters filled with `value`. */
const pathOf = (route: Route, value: string) =>
  (servedPaths(route)[0] ?? '').replace(/\{\w+\}/g, encodeURIComponent(value));
/** Each path parameter, filled with B's identifier of that kind. */
const bIdFor = (route: Route) => {
  const path = route.paths[0] ?? '';
  if (path.includes('{api_key}')) return ids.apiKey;
  if (path.includes('{reference}')) return ids.virtualAccount;
  if (path.startsWith('/events/')) return ids.event;
  if (path.startsWith('/webhook-endpoints/')) return ids.endpoint;
  return '';
};
/** A valid body for a route (what A would send for its own objects). */
const BODIES: Record<string, unknown> = {
  'create-api-key': {},
  'roll-api-key': { old_key_expires_at: new Date(Date.now() + 3_600_000).toISOString() },
  'set-api-key-ips': { allowed_ips: [] },
  'dashboard-create-webhook-endpoint': { url: 'http://127.0.0.1:9/a-hooks' },
  'dashboard-redeliver-event': {},
  'dashboard-rotate-webhook-secret': {},
  'start-totp-enrolment': { access_token: 'x' },
  'confirm-totp-enrolment': { access_token: 'x', code: '123456' },
};
/** What A gets on each session route that names one of B's objects, or on a list of its own. */
const EXPECTED: Record<string, number> = {
  'get-dashboard-overview': 200,
  'list-api-keys': 200,
  'create-api-key': 201,
  'roll-api-key': 404,
  'revoke-api-key': 404,
  'set-api-key-ips': 404,
  'dashboard-list-transactions': 200,
  'dashboard-list-virtual-accounts': 200,
  'dashboard-get-payment': 404,
  'dashboard-list-webhook-endpoints': 200,
  'dashboard-create-webhook-endpoint': 201,
  'dashboard-delete-webhook-endpoint': 404,
  'dashboard-rotate-webhook-secret': 404,
  'dashboard-list-events': 200,
  'dashboard-get-event': 404,
  'dashboard-redeliver-event': 404,
  // B's access token is not A's own: refused before Cognito is asked.
  'start-totp-enrolment': 401,
  'confirm-totp-enrolment': 401,
};

beforeAll(async () => {
  gateway = await startTestGateway();
  [a, b] = await Promise.all([aMerchant(), aMerchant()]);
  [userA, userB] = await Promise.all([
    aDashboardUser(a.merchant.merchant_id),
    aDashboardUser(b.merchant.merchant_id),
  ]);
  // B: a key, an endpoint, an event (a transfer's), a virtual account, transactions.
  await fund(b.merchant.merchant_id, 100_000);
  const asB = (method: string, path: string, body?: unknown) =>
    call(gateway, method, `${API_PREFIX}${path}`, { headers: b.headers, ...(body ? { body } : {}) });
  const endpoint = await asB('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/b-hooks' });
  const transfer = await asB('POST', '/transfers', {
    reference: `iso-${Date.now()}`,
    amount: 1_000,
    account_number: anAccount('058'),
    bank_code: '058',
  });
  const virtualAccount = await asB('POST', '/virtual-accounts', { amount: 5_000 });
  expect([endpoint.status, transfer.status, virtualAccount.status]).toEqual([201, 201, 201]);
  let event = '';
  for (let i = 0; i < 50 && !event; i++) {
    event = data<{ id: string }[]>(await asB('GET', '/events?limit=1'))[0]?.id ?? '';
    if (!event) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  ids = {
    apiKey: b.apiKey,
    endpoint: data(endpoint).id as string,
    event,
    virtualAccount: data(virtualAccount).reference as string,
  };
  expect(ids.event).toMatch(/^evt_/);
  secrets = [
    b.merchant.merchant_id,
    b.merchant.account_number,
    b.apiKey,
    userB.email,
    data(transfer).reference as string,
    ...Object.values(ids),
  ];
}, 60_000);
afterAll(() => gateway.close());

describe("a dashboard user of merchant A with merchant B's identifiers", () => {
  it('has a case for every session route of the route table', () => {
    const missing = SESSION_ROUTES.map((route) => route.name).filter((name) => !(name in EXPECTED));
    expect(missing).toEqual([]);
  });

  it.each(SESSION_ROUTES.map((route) => [route.name, route] as const))(
    '%s: nothing of B is found, changed or shown',
    async (name, route) => {
      const bodyOf = name.endsWith('-totp-enrolment')
        ? { ...(BODIES[name] as object), access_token: userB.idToken }
        : BODIES[name];
      const response = await call(gateway, route.method, pathOf(route, bIdFor(route)), {
        headers: userA.headers,
        ...(bodyOf === undefined ? {} : { body: bodyOf }),
      });
      expect(response.status, JSON.stringify(response.body)).toBe(EXPECTED[name]);
      if (response.status === 404) expect(response.body?.code).toBe('not_found');
      const text = JSON.stringify(response.body);
      expect(secrets.filter((secret) => text.includes(secret))).toEqual([]);
    },
  );

  it("cannot name B in a header or a query: the merchant is the token's claim only", async () => {
    const KEYS = '/api/v1/dashboard/keys';
    const viaHeader = await call(gateway, 'GET', KEYS, {
      headers: { ...userA.headers, 'X-Merchant-Id': b.merchant.merchant_id },
    });
    expect(viaHeader.status).toBe(200);
    const listed = data<{ api_key: string }[]>(viaHeader).map((key) => key.api_key);
    expect(listed).toContain(a.apiKey);
    expect(listed).not.toContain(ids.apiKey);
    const viaQuery = await call(gateway, 'GET', `${KEYS}?merchant_id=${b.merchant.merchant_id}`, {
      headers: userA.headers,
    });
    expect(viaQuery.status).toBe(400);
  });

  it("left B's key, endpoint and event as they were", async () => {
    expect((await call(gateway, 'GET', `${API_PREFIX}/balance`, { headers: b.headers })).status).toBe(200);
    const endpoints = data<{ id: string; status: string }[]>(
      await call(gateway, 'GET', `${API_PREFIX}/webhook-endpoints`, { headers: b.headers }),
    );
    expect(endpoints.find((endpoint) => endpoint.id === ids.endpoint)?.status).toBe('enabled');
    const keys = data<{ api_key: string; status: string }[]>(
      await call(gateway, 'GET', '/api/v1/dashboard/keys', { headers: userB.headers }),
    );
    expect(keys.find((key) => key.api_key === ids.apiKey)?.status).toBe('active');
  });
});

describe('one gate per kind of caller', () => {
  it.each(SESSION_ROUTES.map((route) => [route.name, route] as const))(
    '%s refuses an API key, with the one 401',
    async (_name, route) => {
      const response = await call(gateway, route.method, pathOf(route, 'x'), {
        headers: a.headers,
        ...bodyFor(route),
      });
      expect(response.status).toBe(401);
      expect(response.body).toStrictEqual({ status: 'error', message: 'Invalid API credentials' });
    },
  );

  it.each(API_KEY_ROUTES.map((route) => [route.name, route] as const))(
    '%s refuses a dashboard session, with the one 401',
    async (_name, route) => {
      const response = await call(gateway, route.method, pathOf(route, 'x'), {
        headers: userA.headers,
        ...bodyFor(route),
      });
      expect(response.status).toBe(401);
      expect(response.body).toStrictEqual({ status: 'error', message: 'Invalid API credentials' });
    },
  );
});

describe("hostile input on the dashboard's routes", () => {
  const CODES: Record<number, string> = {
    400: 'validation_error',
    405: 'method_not_allowed',
    415: 'unsupported_media_type',
  };
  const send = (
    route: Route,
    init: { method?: string; body?: string; type?: string; token?: string; query?: string },
  ) =>
    fetch(`${gateway.url}${pathOf(route, 'x')}${init.query ?? ''}`, {
      method: init.method ?? route.method,
      headers: {
        Authorization: init.token ?? userA.headers.Authorization,
        ...(init.body !== undefined ? { 'Content-Type': init.type ?? 'application/json' } : {}),
      },
      body: init.body,
    });
  const expectError = async (response: Response, status: number, label: string) => {
    const body = (await response.json()) as Record<string, unknown>;
    expect({ status: response.status, code: body.code }, label).toEqual({ status, code: CODES[status] });
  };

  it.each(
    (ROUTES as readonly Route[])
      .filter((route) => route.dashboard)
      .map((route) => [route.name, route] as const),
  )(
    '%s: malformed bodies, wrong methods, forged tokens: the contract envelope, never a 5xx',
    async (_name, route) => {
      const other = route.method === 'GET' ? 'DELETE' : 'GET';
      if (!ROUTES.some((r) => r.method === other && servedPaths(r).includes(servedPaths(route)[0] ?? ''))) {
        await expectError(await send(route, { method: other }), 405, `${other} ${route.name}`);
      }
      if (route.method === 'POST') {
        for (const body of [
          '{',
          '[]',
          '"text"',
          '{"a":1,"a":2}',
          JSON.stringify({ unexpected_field: true }),
        ]) {
          const response = await send(route, { body });
          // A route whose path names nothing of this merchant may answer 404 before reading the body.
          if (response.status === 404) continue;
          await expectError(response, 400, `${route.name} ${body}`);
        }
        const plain = await send(route, { body: '{}', type: 'text/plain' });
        if (plain.status !== 404) await expectError(plain, 415, `${route.name} text/plain`);
      }
      if (route.auth === 'session') {
        for (const token of [
          'Bearer',
          'Bearer a.b.c',
          'Basic dXNlcjpwYXNz',
          `Bearer ${userA.idToken.split('.').reverse().join('.')}`,
          // A's real signature over claims naming B: the forgery a signature check exists for.
          `Bearer ${reclaimedCopy(userA.idToken, { 'custom:merchant_id': b.merchant.merchant_id })}`,
          `Bearer ${forgedCopy(userA.idToken)}`,
          `Bearer ${unsignedCopy(userA.idToken)}`,
        ]) {
          const response = await send(route, { token, ...(route.method === 'POST' ? { body: '{}' } : {}) });
          expect(response.status, token).toBe(401);
          expect(await response.json()).toStrictEqual({
            status: 'error',
            message: 'Invalid API credentials',
          });
        }
      }
    },
  );
});
