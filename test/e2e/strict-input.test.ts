import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';
import { merchantState } from '#test/support/state.ts';

/**
 * API.md §11 through the local gateway and the real handlers: a query parameter given twice, an
 * impossible date, a duplicated JSON key and a charset other than UTF-8 are refused (400, or 415
 * for the charset), and nothing is created by any of them.
 */

let gateway: LocalGateway;
type Merchant = Awaited<ReturnType<typeof aMerchant>>;
let merchant: Merchant;
let before: Awaited<ReturnType<typeof merchantState>>;

beforeAll(async () => {
  gateway = await startTestGateway();
  merchant = await aMerchant();
  await fund(merchant.merchant.merchant_id, 5_000_000);
  before = await merchantState(merchant.merchant.merchant_id);
});
afterAll(() => gateway.close());

const get = (path: string) => call(gateway, 'GET', path, { headers: merchant.headers });
const post = (path: string, rawBody: string | Uint8Array, contentType = 'application/json') =>
  call(gateway, 'POST', path, { rawBody, headers: { ...merchant.headers, 'content-type': contentType } });
const account = anAccount('058');

describe('strict input over HTTP (API.md §11)', () => {
  it.each([
    ['type=credit&type=debit', 'query.type'],
    ['limit=5&limit=100', 'query.limit'],
    ['from=2026-11-01&from=2026-11-02', 'query.from'],
  ])('answers GET /transactions?%s with 400 naming the repeated parameter', async (query, field) => {
    const response = await get(`/transactions?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      status: 'error',
      message: 'Query parameter given more than once',
      code: 'validation_error',
      errors: [{ field, message: 'Given more than once' }],
    });
  });

  it.each([
    ['/balance?x=1&x=2', 'query.x'],
    ['/banks?page=1&page=1', 'query.page'],
    ['/banks?limit=5&limit=5', 'query.limit'],
  ])('answers %s, a parameter given twice (read or not), with 400 naming it', async (path, field) => {
    const response = await get(path);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      message: 'Query parameter given more than once',
      code: 'validation_error',
      errors: [{ field, message: 'Given more than once' }],
    });
  });

  // As the lists refuse a parameter they do not take (API.md §1, §3: a typo never passes
  // silently), so does every route that reads no query; each parameter is named.
  it.each([
    ['/balance?currency=USD', ['query.currency']],
    ['/banks?_=1&country=nigeria', ['query._', 'query.country']],
    ['/transactions/trf_none?expand=1', ['query.expand']],
    ['/payments/va_none?x=', ['query.x']],
  ])('answers %s, parameters the route does not read, with 400 naming each', async (path, fields) => {
    const response = await get(path);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      status: 'error',
      message: 'Request validation failed',
      code: 'validation_error',
      errors: fields.map((field) => ({ field, message: 'Unknown field' })),
    });
    expect((await get(path.split('?')[0] ?? path)).status).not.toBe(400);
  });

  it.each([
    ['from', '2026-02-30'],
    ['to', '2026-04-31'],
    ['from', '2025-02-29'],
    ['to', '2026-02-30T10:00:00Z'],
    ['from', '2026-11-30T24:00:00Z'],
  ])('answers an impossible date %s=%s with 400', async (name, value) => {
    const response = await get(`/transactions?${name}=${encodeURIComponent(value)}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'validation_error',
      errors: [{ field: `query.${name}`, message: expect.stringContaining('date') }],
    });
  });

  it('says how to write an offset when its "+" arrived as a space (typed into the URL as it is)', async () => {
    const response = await get('/transactions?from=2026-11-25T22:30:00+01:00');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      errors: [{ field: 'query.from', message: expect.stringContaining('write an offset as %2B01:00') }],
    });
    expect((await get('/transactions?from=2026-11-25T22:30:00%2B01:00')).status).toBe(200);
  });

  it('still lists with real dates, a leap day included', async () => {
    const response = await get('/transactions?from=2024-02-29&to=2099-12-31T23:59:59Z&type=credit');
    expect(response.status).toBe(200);
  });

  it('answers a transfer whose amount is given twice with 400, and sends nothing', async () => {
    const body = `{"reference":"dup-amount","amount":100,"amount":1000000,"account_number":"${account}","bank_code":"058"}`;
    const response = await post('/transfers', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      status: 'error',
      message: 'Duplicate key in JSON body',
      code: 'validation_error',
      errors: [{ field: 'amount', message: 'Key given more than once' }],
    });
    expect((await get('/transactions/dup-amount')).status).toBe(404);
  });

  it.each(['999999999.99999999', '100.000000000000001'])(
    'answers a transfer of amount %s, a fraction JSON.parse rounds to a whole number, with 400, and sends nothing',
    async (amount) => {
      const reference = `frac-${amount.length}`;
      const body = `{"reference":"${reference}","amount":${amount},"account_number":"${account}","bank_code":"058"}`;
      const response = await post('/transfers', body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 'validation_error',
        errors: [{ field: 'amount', message: expect.stringContaining('whole number') }],
      });
      expect((await get(`/transactions/${reference}`)).status).toBe(404);
    },
  );

  it('answers a body sent in Latin-1 as UTF-8 with 400 naming the field, never storing the mangled text', async () => {
    const text = `{"account_number":"${account}","bank_code":"058","nickname":"Café"}`;
    const response = await post(
      '/beneficiaries',
      Buffer.from(text, 'latin1'),
      'application/json; charset=utf-8',
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'validation_error',
      errors: [{ field: 'nickname', message: expect.stringContaining('UTF-8') }],
    });
    const saved = data<unknown[]>(await get('/beneficiaries'));
    expect(JSON.stringify(saved)).not.toContain('\uFFFD');
  });

  it('answers a duplicated key in a nested object with 400 naming its path, and opens nothing', async () => {
    const body =
      '{"amount":50000,"reference":"dup-va","customer":{"name":"Ada","email":"a@example.ng","email":"b@example.ng"}}';
    const response = await post('/virtual-accounts', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      errors: [{ field: 'customer.email', message: 'Key given more than once' }],
    });
    expect((await get('/payments/dup-va')).status).toBe(404);
  });

  it.each(['utf-16', 'UTF-16LE', 'iso-8859-1'])(
    'answers a body sent with charset=%s with 415, and creates nothing',
    async (charset) => {
      const response = await post(
        '/beneficiaries',
        JSON.stringify({ account_number: account, bank_code: '058' }),
        `application/json; charset=${charset}`,
      );
      expect(response.status).toBe(415);
      expect(response.body).toMatchObject({ status: 'error', code: 'unsupported_media_type' });
    },
  );

  it('answers a body sent with two Content-Type headers with 415, in either order, and creates nothing', async () => {
    const body = JSON.stringify({ account_number: account, bank_code: '058' });
    for (const types of [
      ['text/plain', 'application/json'],
      ['application/json', 'application/json'],
    ]) {
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers = Object.entries(merchant.headers).flat();
        for (const type of types) headers.push('Content-Type', type);
        // As a flat list Node sends exactly these: Host too must be given.
        headers.push('Content-Length', String(Buffer.byteLength(body)), 'Host', new URL(gateway.url).host);
        const request = httpRequest(
          `${gateway.url}/beneficiaries`,
          { method: 'POST', headers },
          (response) => {
            let text = '';
            response.on('data', (chunk) => {
              text += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      expect(status, `${types.join(' + ')}: ${text}`).toBe(415);
      expect(JSON.parse(text)).toMatchObject({ code: 'unsupported_media_type' });
    }
  });

  it('takes the same beneficiary with charset=utf-8', async () => {
    const response = await post(
      '/beneficiaries',
      JSON.stringify({ account_number: anAccount('058'), bank_code: '058' }),
      'application/json; charset=UTF-8',
    );
    expect(response.status).toBe(201);
  });

  it('changed nothing the merchant owns but the one beneficiary created on purpose', async () => {
    const after = await merchantState(merchant.merchant.merchant_id);
    expect({ ...after, beneficiaries: [] }).toStrictEqual({ ...before, beneficiaries: [] });
    const listed = await get('/beneficiaries');
    expect(listed.body?.data).toHaveLength(1);
  });
});
