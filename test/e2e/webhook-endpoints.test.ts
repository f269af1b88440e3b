import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { sha256Base64url } from '#shared/crypto/digest.ts';
import { DELETED_ENDPOINT_KEPT_MS, getEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { call, callFrom, data, startTestGateway } from '#test/support/gateway.ts';
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
    // A sent `null`, `false`, `0` or `""` is not an absent body: refused, nothing deleted or rotated.
    const kept = await getEndpoint(m.merchant.merchant_id, endpoint.id);
    for (const [method, route] of [
      ['DELETE', path],
      ['POST', `${path}/rotate-secret`],
    ] as const) {
      for (const rawBody of ['null', 'false', '0', '""']) {
        const refused = await call(gateway, method, route, { rawBody, headers: jsonHeaders });
        expect([refused.status, refused.body?.errors], `${method} ${rawBody}`).toEqual([
          400,
          [{ field: 'body', message: 'Must be an object' }],
        ]);
      }
    }
    expect(await getEndpoint(m.merchant.merchant_id, endpoint.id)).toStrictEqual(kept);
    expect((await list(m)).map((listed) => listed.id)).toEqual([endpoint.id]);
    const deleted = await call(gateway, 'DELETE', `/api/v1/developer/webhook-endpoints/${endpoint.id}`, {
      body: {},
      headers: m.headers,
    });
    expect(deleted.status).toBe(200);
    expect(data<Endpoint>(deleted)).toMatchObject({ id: endpoint.id, status: 'deleted' });
    expect(data<Endpoint>(deleted).secret).toBeUndefined();
    expect(await list(m)).toEqual([]);
    // Kept a week, then DynamoDB's TTL removes it and its secrets (a delivery finds it missing: deleted).
    const stored = await getEndpoint(m.merchant.merchant_id, endpoint.id);
    expect(stored?.status).toBe('deleted');
    const week = Date.now() / 1000 + DELETED_ENDPOINT_KEPT_MS / 1000;
    expect((stored as { ttl?: number } | undefined)?.ttl).toBeGreaterThan(week - 60);
    expect((stored as { ttl?: number } | undefined)?.ttl).toBeLessThan(week + 60);
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

  describe('Idempotency-Key (a retry after a lost answer makes nothing twice, as Stripe)', () => {
    const keyed = (m: Merchant, key: string) => ({ ...m.headers, 'Idempotency-Key': key });
    const createWith = (m: Merchant, key: string, body: unknown) =>
      call(gateway, 'POST', '/webhook-endpoints', { body, headers: keyed(m, key) });
    const rotateWith = (m: Merchant, key: string, id: string) =>
      call(gateway, 'POST', `/webhook-endpoints/${id}/rotate-secret`, { headers: keyed(m, key) });

    it('answers a repeated create with the same endpoint and secret (200, replayed) and makes one endpoint', async () => {
      const m = await aMerchant();
      const body = { url: 'http://127.0.0.1:9/keyed', events: ['transfer.failed'], description: 'Keyed' };
      const first = await createWith(m, 'order-hooks-1', body);
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await createWith(m, 'order-hooks-1', body);
      expect([again.status, again.body?.message]).toEqual([200, 'Webhook endpoint already created']);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(data<Endpoint>(again)).toEqual(data<Endpoint>(first));
      expect(data<Endpoint>(again).secret).toMatch(/^whsec_/);
      expect((await list(m)).map((e) => e.id)).toEqual([data<Endpoint>(first).id]);
      // Another merchant's same key is its own.
      const other = await aMerchant();
      const theirs = await createWith(other, 'order-hooks-1', body);
      expect(theirs.status).toBe(201);
      expect(data<Endpoint>(theirs).id).not.toBe(data<Endpoint>(first).id);
      // Without a key, the same body makes another endpoint, as before.
      expect((await create(m, body)).status).toBe(201);
      expect(await list(m)).toHaveLength(2);
    });

    it('makes one endpoint of concurrent creates with one key, every answer naming it with its secret', async () => {
      const m = await aMerchant();
      const body = { url: 'http://127.0.0.1:9/raced' };
      const answers = await Promise.all(Array.from({ length: 6 }, () => createWith(m, 'raced-key', body)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      const [made] = await list(m);
      expect(await list(m)).toHaveLength(1);
      for (const answer of answers) {
        expect(data<Endpoint>(answer).id).toBe(made?.id);
        expect(data<Endpoint>(answer).secret).toBe(data<Endpoint>(answers[0] ?? answer).secret);
      }
    });

    it('refuses the key with another request (409 duplicate_reference), and forgets it after 24 hours', async () => {
      const m = await aMerchant();
      const first = data<Endpoint>(await createWith(m, 'k-24h', { url: 'http://127.0.0.1:9/a' }));
      for (const body of [
        { url: 'http://127.0.0.1:9/b' },
        { url: 'http://127.0.0.1:9/a', description: 'x' },
        { url: 'http://127.0.0.1:9/a', events: ['transfer.failed'] },
      ]) {
        const refused = await createWith(m, 'k-24h', body);
        expect([refused.status, refused.body?.code], JSON.stringify(body)).toEqual([
          409,
          'duplicate_reference',
        ]);
        expect(refused.body?.message).toBe('This Idempotency-Key was already used with a different request');
      }
      // A create's key is not a rotation's either.
      const asRotation = await rotateWith(m, 'k-24h', first.id);
      expect([asRotation.status, asRotation.body?.code]).toEqual([409, 'duplicate_reference']);
      expect(await list(m)).toHaveLength(1);
      // 24 hours later (its expiry moved back; DynamoDB's TTL deletes it some time after), a new request.
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName('webhookEndpoints'),
          Key: { merchant_id: m.merchant.merchant_id, endpoint_id: `#key#${sha256Base64url('k-24h')}` },
          UpdateExpression: 'SET expires_at = :past',
          ConditionExpression: 'attribute_exists(endpoint_id)',
          ExpressionAttributeValues: { ':past': Date.now() - 1 },
        }),
      );
      const later = await createWith(m, 'k-24h', { url: 'http://127.0.0.1:9/b' });
      expect(later.status).toBe(201);
      expect(data<Endpoint>(later).id).not.toBe(first.id);
      expect(await createWith(m, 'k-24h', { url: 'http://127.0.0.1:9/b' })).toMatchObject({ status: 200 });
      expect(await list(m)).toHaveLength(2);
    });

    it("remembers a create's and a rotation's key for 24 hours, DynamoDB's ttl with it", async () => {
      const m = await aMerchant();
      const stored = async (key: string) =>
        (
          await dynamo.send(
            new GetCommand({
              TableName: tableName('webhookEndpoints'),
              Key: { merchant_id: m.merchant.merchant_id, endpoint_id: `#key#${sha256Base64url(key)}` },
              ConsistentRead: true,
            }),
          )
        ).Item;
      // Written out, not imported: a changed lifetime must fail here.
      const DAY = 24 * 3600 * 1000;
      const before = Date.now();
      const made = data<Endpoint>(await createWith(m, 'ttl-create', { url: 'http://127.0.0.1:9/ttl' }));
      expect((await rotateWith(m, 'ttl-rotate', made.id)).status).toBe(200);
      const after = Date.now();
      for (const key of ['ttl-create', 'ttl-rotate']) {
        const item = await stored(key);
        expect(item?.expires_at, key).toBeGreaterThanOrEqual(before + DAY);
        expect(item?.expires_at, key).toBeLessThanOrEqual(after + DAY);
        expect(item?.ttl, key).toBe(Math.ceil(Number(item?.expires_at) / 1000));
      }
    });

    it('remembers only what succeeded: a create refused at the limit can be retried with its key', async () => {
      const m = await aMerchant();
      for (const i of [1, 2, 3, 4, 5]) await create(m, { url: `http://127.0.0.1:9/full/${i}` });
      const refused = await createWith(m, 'after-limit', { url: 'http://127.0.0.1:9/sixth' });
      expect([refused.status, refused.body?.code]).toEqual([422, 'limit_reached']);
      const badUrl = await createWith(m, 'after-limit', { url: 'https://169.254.169.254/' });
      expect([badUrl.status, badUrl.body?.code]).toEqual([400, 'invalid_url']);
      const [oldest] = await list(m);
      await call(gateway, 'DELETE', `/webhook-endpoints/${oldest?.id}`, { headers: m.headers });
      const made = await createWith(m, 'after-limit', { url: 'http://127.0.0.1:9/sixth' });
      expect(made.status).toBe(201);
      // The remembered key is no endpoint: the list holds endpoints only, and its id names none.
      expect((await list(m)).map((e) => e.url)).toContain('http://127.0.0.1:9/sixth');
      expect(await list(m)).toHaveLength(5);
      const key = encodeURIComponent(`#key#${sha256Base64url('after-limit')}`);
      for (const [method, path] of [
        ['DELETE', `/webhook-endpoints/${key}`],
        ['POST', `/webhook-endpoints/${key}/rotate-secret`],
      ] as const) {
        const answer = await call(gateway, method, path, { headers: m.headers });
        expect([answer.status, answer.body?.code], method).toEqual([404, 'not_found']);
      }
    });

    it('rotates once for a key: a retry, also concurrent, answers the same new secret and rotates nothing', async () => {
      const m = await aMerchant();
      const endpoint = data<Endpoint>(await create(m, { url: 'http://127.0.0.1:9/rotated' }));
      const first = await rotateWith(m, 'rotate-1', endpoint.id);
      expect(first.status).toBe(200);
      expect(data<Endpoint>(first).secret).not.toBe(endpoint.secret);
      const again = await rotateWith(m, 'rotate-1', endpoint.id);
      expect([again.status, again.body?.message]).toEqual([200, 'Webhook secret rotated']);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(data<Endpoint>(again)).toEqual(data<Endpoint>(first));
      const versions = async () =>
        (await getEndpoint(m.merchant.merchant_id, endpoint.id))?.secrets.map((s) => s.version);
      expect(await versions()).toEqual([1, 2]);
      const burst = await Promise.all(
        Array.from({ length: 6 }, () => rotateWith(m, 'rotate-2', endpoint.id)),
      );
      expect(burst.map((a) => a.status)).toEqual(Array(6).fill(200));
      expect(new Set(burst.map((a) => data<Endpoint>(a).secret)).size).toBe(1);
      expect(await versions()).toEqual([1, 2, 3]);
      // The key of one endpoint's rotation is not another's, nor a create's.
      const second = data<Endpoint>(await create(m, { url: 'http://127.0.0.1:9/other' }));
      const elsewhere = await rotateWith(m, 'rotate-1', second.id);
      expect([elsewhere.status, elsewhere.body?.code]).toEqual([409, 'duplicate_reference']);
      const asCreate = await createWith(m, 'rotate-1', { url: 'http://127.0.0.1:9/rotated' });
      expect([asCreate.status, asCreate.body?.code]).toEqual([409, 'duplicate_reference']);
      // Without a key, every rotation rotates, as before.
      await call(gateway, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers: m.headers });
      expect(await versions()).toEqual([1, 2, 3, 4]);
    });

    it('refuses a malformed or repeated key with validation_error, never ignoring it', async () => {
      const m = await aMerchant();
      const body = { url: 'http://127.0.0.1:9/bad-key' };
      for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
        const refused = await createWith(m, key, body);
        expect([refused.status, refused.body?.code], JSON.stringify(key)).toEqual([400, 'validation_error']);
        expect(refused.body?.errors).toEqual([
          { field: 'headers.Idempotency-Key', message: expect.any(String) },
        ]);
      }
      expect((await createWith(m, 'x'.repeat(255), body)).status).toBe(201);
      const repeated = await callFrom(
        gateway,
        '127.0.0.1',
        'POST',
        '/webhook-endpoints',
        [
          'X-API-Key',
          m.apiKey,
          'X-API-Secret',
          m.apiSecret,
          'Content-Type',
          'application/json',
          'Idempotency-Key',
          'one',
          'Idempotency-Key',
          'two',
        ],
        body,
      );
      expect([repeated.status, repeated.body?.code]).toEqual([400, 'validation_error']);
      expect(await list(m)).toHaveLength(1);
    });
  });
});
