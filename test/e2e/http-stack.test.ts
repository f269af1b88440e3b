import path from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { UNSUPPORTED_CODING } from '#shared/http/errors.ts';
import { ECHO_PARAM_ROUTE, ECHO_ROUTE } from '#test/fixtures/routes.ts';
import { call, PROJECT_ROOT, startTestGateway } from '#test/support/gateway.ts';

// The stack's body handling over real HTTP, through a fixture POST route served by the gateway.
let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway({
    rootDir: path.join(PROJECT_ROOT, 'test', 'fixtures'),
    routes: [ECHO_ROUTE, ECHO_PARAM_ROUTE],
  });
});
afterAll(() => gateway.close());

describe('JSON bodies over HTTP', () => {
  it('serves the route at both paths', async () => {
    for (const p of ['/echo', '/api/v1/developer/echo']) {
      const response = await call(gateway, 'POST', p, { body: { amount: 5 } });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ status: 'success', message: 'Echoed', data: { amount: 5 } });
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 413 above 16 KiB and 413 with the envelope for a huge body', async () => {
    const big = await call(gateway, 'POST', '/echo', { body: { amount: 1, note: 'x'.repeat(17_000) } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ status: 'error', code: 'payload_too_large' });
    const huge = await call(gateway, 'POST', '/echo', {
      rawBody: 'x'.repeat(2 * 1024 * 1024),
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(413);
    expect(huge.headers.get('x-request-id')).toBeTruthy();
    expect(huge.body).toMatchObject({ code: 'payload_too_large' });
  });

  it('answers 415 for a form body', async () => {
    const response = await call(gateway, 'POST', '/echo', {
      rawBody: 'amount=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({ status: 'error', code: 'unsupported_media_type' });
  });

  it('decodes a gzip or deflate body as API Gateway does, and answers 415 for another coding or a body not so encoded', async () => {
    const json = '{"amount":1}';
    for (const [coding, bytes] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['identity', Buffer.from(json)],
    ] as const) {
      const response = await call(gateway, 'POST', '/echo', {
        rawBody: bytes,
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
      });
      expect([response.status, response.body?.data], coding).toEqual([201, { amount: 1 }]);
    }
    for (const [coding, bytes] of [
      ['br', Buffer.from(json)],
      ['gzip', Buffer.from(json)],
      ['identity, gzip', gzipSync(json)],
    ] as const) {
      const response = await call(gateway, 'POST', '/echo', {
        rawBody: bytes,
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
      });
      expect([response.status, response.body?.code, response.body?.message], coding).toEqual([
        415,
        'unsupported_media_type',
        UNSUPPORTED_CODING,
      ]);
    }
  });

  it.each(['application/vnd.api+json', 'application/problem+json', 'application/merge-patch+json'])(
    'answers 415 for %s: only application/json is a JSON body (API.md §3)',
    async (type) => {
      const response = await call(gateway, 'POST', '/echo', {
        rawBody: '{"amount":1}',
        headers: { 'content-type': type },
      });
      expect([response.status, response.body?.code]).toEqual([415, 'unsupported_media_type']);
    },
  );

  it('takes application/json in any letter case, with a UTF-8 charset', async () => {
    for (const type of ['Application/JSON', 'application/json; charset=UTF-8']) {
      const response = await call(gateway, 'POST', '/echo', {
        rawBody: '{"amount":1}',
        headers: { 'content-type': type },
      });
      expect(response.status).toBe(201);
    }
  });

  it('answers 400 for malformed JSON', async () => {
    const response = await call(gateway, 'POST', '/echo', {
      rawBody: '{"amount":',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_error' });
  });

  it('answers 500 without internals, with the request id the client saw', async () => {
    const response = await call(gateway, 'POST', '/echo', { body: { amount: 1, note: 'explode' } });
    expect(response.status).toBe(500);
    expect(JSON.stringify(response.body)).not.toContain('srv');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('path parameters over HTTP: decoded once, as on AWS', () => {
  const echoed = async (sent: string) => {
    const response = await call(gateway, 'GET', `/api/v1/developer/echo/${sent}`);
    expect(response.status).toBe(200);
    return (response.body as { data: { reference: string } }).data.reference;
  };

  it.each(['reversal:trf-2026-0042', 'inv 42/b', '100%', 'réf-ñ'])(
    'hands the handler %j from its encodeURIComponent form',
    async (reference) => {
      expect(await echoed(encodeURIComponent(reference))).toBe(reference);
    },
  );

  it('decodes exactly once (the gateway passes the parameter encoded, the stack decodes it)', async () => {
    expect(await echoed(encodeURIComponent(encodeURIComponent('reversal:x')))).toBe('reversal%3Ax');
    expect(await echoed('reversal:x')).toBe('reversal:x');
  });
});
