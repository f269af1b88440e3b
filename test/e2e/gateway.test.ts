import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { BANKS } from '#shared/banks/data.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

const expectEnvelopeHeaders = (headers: Headers) => {
  expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
};

describe('GET /banks through the local gateway', () => {
  it.each(['/banks', '/banks/list', '/api/v1/developer/banks', '/api/v1/developer/banks/list'])(
    '%s lists every bank, sorted by name, cacheable for an hour',
    async (path) => {
      const response = await call(gateway, 'GET', path);
      expect(response.status).toBe(200);
      expectEnvelopeHeaders(response.headers);
      expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
      expect(response.body).toMatchObject({ status: 'success', message: expect.any(String) });
      const data = response.body?.data as { code: string; name: string }[];
      expect(data).toHaveLength(BANKS.length);
      expect(data).toContainEqual({ code: '058', name: 'Guaranty Trust Bank' });
      // A list like every other (API.md §1), in one page.
      expect(response.body?.meta).toEqual({ next_cursor: null });
    },
  );

  it('needs no credentials and accepts them when sent', async () => {
    const response = await call(gateway, 'GET', '/banks', {
      headers: { 'X-API-Key': 'pk_whatever', 'X-API-Secret': 'sk_whatever' },
    });
    expect(response.status).toBe(200);
  });

  it('pages by name with ?limit= and ?cursor=, as every list pages, and the pages make the whole list', async () => {
    const whole = (await call(gateway, 'GET', '/banks')).body?.data as { code: string; name: string }[];
    const seen: { code: string; name: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `limit=20&cursor=${encodeURIComponent(cursor)}` : 'limit=20';
      const response = await call(gateway, 'GET', `/banks/list?${query}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
      const data = response.body?.data as { code: string; name: string }[];
      expect(data.length).toBeLessThanOrEqual(20);
      seen.push(...data);
      cursor = (response.body?.meta as { next_cursor: string | null } | undefined)?.next_cursor ?? null;
      // A full page before the last, and a next cursor exactly while banks remain.
      expect(cursor === null).toBe(seen.length === whole.length);
      if (cursor) expect(data).toHaveLength(20);
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(Math.ceil(BANKS.length / 20));
    expect(seen).toEqual(whole);
  });

  it('takes a cursor without a limit as a page of the default 20, and limit=100 as the whole list', async () => {
    const first = await call(gateway, 'GET', '/banks?limit=5');
    const data = first.body?.data as { code: string }[];
    expect(data).toHaveLength(5);
    const cursor = (first.body?.meta as { next_cursor: string } | undefined)?.next_cursor ?? '';
    const next = await call(gateway, 'GET', `/banks?cursor=${encodeURIComponent(cursor)}`);
    expect(next.status).toBe(200);
    const whole = (await call(gateway, 'GET', '/banks')).body?.data as { code: string }[];
    expect(next.body?.data).toEqual(whole.slice(5, 25));
    const all = await call(gateway, 'GET', '/banks?limit=100');
    expect(all.body?.data).toEqual(whole);
    expect(all.body?.meta).toEqual({ next_cursor: null });
  });

  it.each([
    ['limit=0', 'query.limit'],
    ['limit=101', 'query.limit'],
    ['limit=abc', 'query.limit'],
    ['cursor=nope!', 'query.cursor'],
    // Well-formed, but another list's: a merchant's list cursor is no place in the bank list.
    [
      `cursor=${Buffer.from(JSON.stringify({ list: 'transactions@x', created_at: '2026-01-01T00:00:00.000Z', id: 'a' })).toString('base64url')}`,
      'query.cursor',
    ],
    [
      `cursor=${Buffer.from(JSON.stringify({ list: 'banks', name: 'Access Bank' })).toString('base64url')}`,
      'query.cursor',
    ],
    ['page=2', 'query.page'],
  ])('refuses ?%s (400 naming %s)', async (query, field) => {
    const response = await call(gateway, 'GET', `/banks?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'validation_error' });
    expect(JSON.stringify(response.body)).toContain(field);
  });

  it('gives every response its own request id', async () => {
    const [a, b] = await Promise.all([call(gateway, 'GET', '/banks'), call(gateway, 'GET', '/banks')]);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('routing errors', () => {
  it.each(['/nope', '/api/v1/developer/nope', '/api/v2/developer/banks', '/banks/list/extra'])(
    '%s is 404 route_not_found with the envelope',
    async (path) => {
      const response = await call(gateway, 'GET', path);
      expect(response.status).toBe(404);
      expectEnvelopeHeaders(response.headers);
      expect(response.body).toEqual({
        status: 'error',
        message: expect.any(String),
        code: 'route_not_found',
      });
    },
  );

  it('routes the path as sent: no dot segment resolved, no backslash made a slash; a trailing slash is the same route', async () => {
    // Sent raw: fetch and the URL parser would resolve the dot segments before sending.
    const raw = (path: string) =>
      new Promise<{ status: number; code: unknown }>((resolve, reject) => {
        const request = httpRequest(gateway.url, { method: 'GET', path }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              code: JSON.parse(Buffer.concat(chunks).toString('utf8')).code,
            }),
          );
        });
        request.on('error', reject);
        request.end();
      });
    for (const path of ['/banks/.', '/x/../banks', '/x/%2e%2e/banks', '/banks/%2E', '/banks\\list']) {
      expect(await raw(path), path).toEqual({ status: 404, code: 'route_not_found' });
    }
    expect((await raw('/banks/')).status).toBe(200);
    expect((await raw('/api/v1/developer/banks/list/')).status).toBe(200);
  });

  it('answers the request targets that are not a path (OPTIONS *, CONNECT) with the envelope, never a 500 or silence', async () => {
    // Written on the socket: no client library sends these as given.
    const exchange = (requestLine: string) =>
      new Promise<{ status: number; headers: string; body: Record<string, unknown> }>((resolve, reject) => {
        const { hostname, port } = new URL(gateway.url);
        const socket = connect(Number(port), hostname, () =>
          socket.write(`${requestLine}\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
        );
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const [head = '', body = ''] = text.split('\r\n\r\n');
          try {
            resolve({
              status: Number(head.split(' ')[1]),
              headers: head.toLowerCase(),
              body: JSON.parse(body),
            });
          } catch {
            reject(new Error(`not an answer: ${JSON.stringify(text.slice(0, 200))}`));
          }
        });
      });
    for (const line of ['OPTIONS * HTTP/1.1', 'CONNECT 127.0.0.1:443 HTTP/1.1']) {
      const answer = await exchange(line);
      expect([answer.status, answer.body.code], line).toEqual([400, 'validation_error']);
      expect(answer.headers, line).toMatch(/x-request-id: [0-9a-f-]{36}/);
    }
    const connectToRoute = await exchange('CONNECT /banks HTTP/1.1');
    expect([connectToRoute.status, connectToRoute.body.code]).toEqual([405, 'method_not_allowed']);
    expect(connectToRoute.headers).toMatch(/allow: get/);
    expect((await exchange('CONNECT /nope HTTP/1.1')).status).toBe(404);
  });

  it('answers a client that half-closes its side once the request is sent (as API Gateway would)', async () => {
    const { hostname, port } = new URL(gateway.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () =>
        socket.end(`GET /banks HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
      );
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toMatchObject({ status: 'success' });
  });

  it('outlives a CONNECT whose client resets the connection before the answer', async () => {
    const { hostname, port } = new URL(gateway.url);
    for (const target of ['/banks', '127.0.0.1:443']) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`, () => {
            socket.resetAndDestroy();
            resolve();
          });
        });
      });
    }
    // An uncaught socket error would have ended the process (and failed this run).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(gateway, 'GET', '/banks')).status).toBe(200);
  });

  it('a route whose handler does not exist yet is absent, not a stub', async () => {
    const served = gateway.routes.map((route) => route.name);
    expect(served).toContain('list-banks');
    const absent = ['create-transfer', 'get-payment'].filter((name) => !served.includes(name));
    for (const name of absent) {
      const path = name === 'create-transfer' ? '/transfers' : '/payments/abc';
      expect((await call(gateway, name === 'create-transfer' ? 'POST' : 'GET', path)).status).toBe(404);
    }
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('%s on a GET path is 405 with Allow', async (method) => {
    const response = await call(gateway, method, '/api/v1/developer/banks');
    expect(response.status).toBe(405);
    expectEnvelopeHeaders(response.headers);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.body).toMatchObject({ status: 'error', code: 'method_not_allowed' });
  });
});
