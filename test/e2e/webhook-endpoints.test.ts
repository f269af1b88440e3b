import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type Endpoint = { id: string; url: string; events: string[]; status: string; secret?: string };
const create = (m: Merchant, body: unknown) =>
  call(gateway, 'POST', '/webhook-endpoints', { body, headers: m.headers });
const list = async (m: Merchant) =>
  data<Endpoint[]>(await call(gateway, 'GET', '/webhook-endpoints', { headers: m.headers }));

describe('webhook endpoints (API.md §8)', () => {
  it('registers an endpoint for every event type by default, shows its secret once, and lists it without', async () => {
    const m = await aMerchant();
    const created = await create(m, { url: 'https://localhost/hooks', description: 'Orders' });
    expect(created.status).toBe(201);
    const endpoint = data<Endpoint>(created);
    expect(endpoint).toMatchObject({
      id: expect.stringMatching(/^we_/),
      url: 'https://localhost/hooks',
      events: [
        'payment.received',
        'virtual_account.paid',
        'transfer.success',
        'transfer.failed',
        'transfer.reversed',
      ],
      description: 'Orders',
      status: 'enabled',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const listed = await list(m);
    expect(listed).toEqual([{ ...endpoint, secret: undefined }].map(({ secret: _s, ...rest }) => rest));
  });

  it('never refuses a rotation: a burst of rotations of one endpoint all answer 200, each with its own secret', async () => {
    const m = await aMerchant();
    const endpoint = data<Endpoint>(await create(m, { url: 'http://127.0.0.1:9/hook' }));
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        call(gateway, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers: m.headers }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    const secrets = answers.map((answer) => data<Endpoint>(answer).secret);
    expect(new Set([endpoint.secret, ...secrets]).size).toBe(13);
  });

  it('rotates the secret (a new one, shown once) and deletes: gone from the list, 404 for another merchant', async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    const endpoint = data<Endpoint>(
      await create(m, { url: 'http://127.0.0.1:9/hook', events: ['transfer.failed'] }),
    );
    const rotated = await call(gateway, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      headers: m.headers,
    });
    expect(rotated.status).toBe(200);
    expect(data<Endpoint>(rotated).secret).toMatch(/^whsec_/);
    expect(data<Endpoint>(rotated).secret).not.toBe(endpoint.secret);
    const withEmptyBody = await call(gateway, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      body: {},
      headers: m.headers,
    });
    expect(withEmptyBody.status).toBe(200);
    const withField = await call(gateway, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      body: { secret: 'mine' },
      headers: m.headers,
    });
    expect([withField.status, withField.body?.code]).toEqual([400, 'validation_error']);

    for (const [method, path] of [
      ['DELETE', `/webhook-endpoints/${endpoint.id}`],
      ['POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`],
    ] as const) {
      const foreign = await call(gateway, method, path, { headers: other.headers });
      expect([foreign.status, foreign.body?.code]).toEqual([404, 'not_found']);
    }
    // A body is optional, and held to API.md §1 and §3 when sent: nothing is deleted by a bad one.
    const path = `/webhook-endpoints/${endpoint.id}`;
    const jsonHeaders = { ...m.headers, 'content-type': 'application/json' };
    for (const [options, status, code] of [
      [{ body: { x: 1 } }, 400, 'validation_error'],
      [{ rawBody: '{bad', headers: jsonHeaders }, 400, 'validation_error'],
      [
        { rawBody: 'x=1', headers: { ...m.headers, 'content-type': 'text/plain' } },
        415,
        'unsupported_media_type',
      ],
      [
        { rawBody: JSON.stringify({ pad: 'x'.repeat(20_000) }), headers: jsonHeaders },
        413,
        'payload_too_large',
      ],
    ] as const) {
      const refused = await call(gateway, 'DELETE', path, { headers: m.headers, ...options });
      expect([refused.status, refused.body?.code], JSON.stringify(options).slice(0, 60)).toEqual([
        status,
        code,
      ]);
    }
    expect((await list(m)).map((listed) => listed.id)).toEqual([endpoint.id]);
    const deleted = await call(gateway, 'DELETE', `/api/v1/developer/webhook-endpoints/${endpoint.id}`, {
      body: {},
      headers: m.headers,
    });
    expect(deleted.status).toBe(200);
    expect(data<Endpoint>(deleted)).toMatchObject({ id: endpoint.id, status: 'deleted' });
    expect(data<Endpoint>(deleted).secret).toBeUndefined();
    expect(await list(m)).toEqual([]);
    const again = await call(gateway, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { headers: m.headers });
    expect(again.status).toBe(404);
  });

  it('deletes an endpoint once under concurrency: one DELETE answers 200, the others 404 as they would after it', async () => {
    const m = await aMerchant();
    const endpoint = data<Endpoint>(await create(m, { url: 'http://127.0.0.1:9/hook' }));
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(gateway, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { headers: m.headers }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 404, 404, 404, 404, 404]);
    expect(answers.find((answer) => answer.status === 404)?.body?.code).toBe('not_found');
    expect(await list(m)).toEqual([]);
  });

  it('allows 5 endpoints, also under concurrency, and a 6th again once one is deleted', async () => {
    const m = await aMerchant();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => create(m, { url: `http://127.0.0.1:9/hooks/${i}` })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    const refused = answers.filter((a) => a.status === 422);
    expect(refused).toHaveLength(3);
    expect(refused[0]?.body?.code).toBe('limit_reached');
    const [first] = await list(m);
    await call(gateway, 'DELETE', `/webhook-endpoints/${first?.id}`, { headers: m.headers });
    expect((await create(m, { url: 'http://127.0.0.1:9/hooks/again' })).status).toBe(201);
    expect(await list(m)).toHaveLength(5);
  });

  it('lists endpoints as every list (API.md §1): newest first, paged by limit and cursor, strict query', async () => {
    const m = await aMerchant();
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      ids.push(data<Endpoint>(await create(m, { url: `http://127.0.0.1:9/paged/${i}` })).id);
    }
    const page = (query: string) =>
      call(gateway, 'GET', `/webhook-endpoints${query}`, { headers: m.headers });
    const first = await page('?limit=2');
    // The two newest (two made in one millisecond would be ordered by id), then the oldest.
    expect(new Set(data<Endpoint[]>(first).map((e) => e.id))).toEqual(new Set([ids[2], ids[1]]));
    const cursor = (first.body as { meta: { next_cursor: string } }).meta.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const second = await page(`?limit=2&cursor=${cursor}`);
    expect(data<Endpoint[]>(second).map((e) => e.id)).toEqual([ids[0]]);
    expect(second.body).toMatchObject({ meta: { next_cursor: null } });
    for (const bad of ['?limit=0', '?limit=abc', '?cursor=zzz', '?foo=1', '?limit=1&limit=2']) {
      const refused = await page(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.body).toMatchObject({ code: 'validation_error' });
    }
  });

  it('refuses URLs the service must never call, with invalid_url (link-local and metadata even locally)', async () => {
    const m = await aMerchant();
    for (const url of [
      'ftp://merchant.example.ng/hook',
      'https://user:pass@merchant.example.ng/hook',
      'https://169.254.169.254/latest/meta-data',
      'http://2852039166/',
      'https://[::ffff:169.254.169.254]/',
      'https://[fe80::1]/',
      'not a url',
    ]) {
      const refused = await create(m, { url });
      expect([refused.status, refused.body?.code], url).toEqual([400, 'invalid_url']);
    }
    const badType = await create(m, { url: 'https://localhost/hook', events: ['payment.sent'] });
    expect([badType.status, badType.body?.code]).toEqual([400, 'validation_error']);
    expect(await list(m)).toEqual([]);
  });
});
