import { randomBytes } from 'node:crypto';
import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import { lambdaContext } from '#test/support/events.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { deliver, nipSessionId, paymentEvent } from '#test/support/payments.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());
afterEach(() => vi.restoreAllMocks());

const key = Buffer.from((process.env.PARTNER_WEBHOOK_SECRET ?? '').replace('whsec_', ''), 'base64');
const now = () => Math.floor(Date.now() / 1000);

/** Sends a webhook with explicit headers; returns the answer and how many messages were queued. */
async function post(body: string, headers: Record<string, string>) {
  const send = vi.spyOn(sqs, 'send');
  const response = await call(gateway, 'POST', '/webhooks/payments', {
    rawBody: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const queued = send.mock.calls.filter(
    ([command]) => (command as SendMessageCommand).input.MessageBody !== undefined,
  ).length;
  send.mockRestore();
  return { ...response, queued };
}

function signed(body: string, overrides: Record<string, string> = {}) {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const ts = String(now());
  return {
    'webhook-id': id,
    'webhook-timestamp': ts,
    'webhook-signature': sign(key, id, ts, body),
    ...overrides,
  };
}

/** Correctly signed, but at a timestamp `offset` seconds from now. */
function signedAt(body: string, offset: number) {
  const ts = String(now() + offset);
  return {
    'webhook-id': 'msg_x',
    'webhook-timestamp': ts,
    'webhook-signature': sign(key, 'msg_x', ts, body),
  };
}

const body = () => JSON.stringify(paymentEvent({ account_number: '5000000001', amount: 1_000 }));

describe('the partner webhook', () => {
  it('queues a correctly signed event and answers exactly {"status":"success","message":"Accepted"}', async () => {
    const payload = body();
    const response = await post(payload, signed(payload));
    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({ status: 'success', message: 'Accepted' });
    expect(response.queued).toBe(1);
  });

  it.each([
    ['a tampered body', (p: string) => ({ body: p.replace('1000', '9000'), headers: signed(p) })],
    [
      're-serialised JSON',
      (p: string) => ({ body: JSON.stringify(JSON.parse(p), null, 2), headers: signed(p) }),
    ],
    // Ten seconds past the ±5 minutes: a request signed 301 s ahead is inside them if a second ticks
    // before the webhook reads its clock (a CI run's failure); the exact edge is a unit test's
    // (money-guards, at a fixed clock).
    ['a stale timestamp', (p: string) => ({ body: p, headers: signedAt(p, -310) })],
    ['a future timestamp', (p: string) => ({ body: p, headers: signedAt(p, 310) })],
    [
      'the wrong secret',
      (p: string) => {
        const ts = String(now());
        return {
          body: p,
          headers: {
            'webhook-id': 'msg_y',
            'webhook-timestamp': ts,
            'webhook-signature': sign(randomBytes(32), 'msg_y', ts, p),
          },
        };
      },
    ],
    ['no signature headers', (p: string) => ({ body: p, headers: {} })],
    [
      'no webhook-id',
      (p: string) => {
        const { 'webhook-id': _id, ...rest } = signed(p);
        return { body: p, headers: rest };
      },
    ],
    [
      'a short signature',
      (p: string) => ({ body: p, headers: signed(p, { 'webhook-signature': 'v1,c2hvcnQ=' }) }),
    ],
    [
      'an over-long signature',
      (p: string) => ({ body: p, headers: signed(p, { 'webhook-signature': `v1,${'QUFB'.repeat(4000)}` }) }),
    ],
  ])('answers %s with 401 invalid_signature and queues nothing', async (_label, make) => {
    const { body: payload, headers } = make(body());
    const response = await post(payload, headers);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_signature' });
    expect(response.queued).toBe(0);
  });

  it('answers 5xx when the queue cannot take the event, so the partner retries', async () => {
    const payload = body();
    vi.spyOn(sqs, 'send').mockRejectedValue(new Error('SQS is down') as never);
    const response = await call(gateway, 'POST', '/webhooks/payments', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', ...signed(payload) },
    });
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(response.body).toMatchObject({ status: 'error', code: 'internal_error' });
    expect(JSON.stringify(response.body)).not.toContain('SQS');
  });

  it('ignores unknown fields, accepts unknown event types without queuing, keeps unusable known ones, refuses only non-JSON', async () => {
    const extra = JSON.stringify({
      ...JSON.parse(body()),
      api_version: '2027-01',
      data: { ...JSON.parse(body()).data, fee_bearer: 'x' },
    });
    expect((await post(extra, signed(extra))).queued).toBe(1);
    const unknown = JSON.stringify({ type: 'refund.processed', data: {} });
    const ignored = await post(unknown, signed(unknown));
    expect(ignored.status).toBe(200);
    expect(ignored.queued).toBe(0);
    // Signed JSON the service cannot credit is queued to be kept for operators, never refused.
    const broken = JSON.stringify({
      type: 'payment.received',
      data: { session_id: 's', account_number: '1', amount: '5' },
    });
    const kept = await post(broken, signed(broken));
    expect(kept.status).toBe(200);
    expect(kept.queued).toBe(1);
    const notJson = '{"type":';
    const refused = await post(notJson, signed(notJson));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'validation_error' });
    expect(refused.queued).toBe(0);
  });

  it('needs no API key and is never rate limited', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 110; i++) {
      const payload = JSON.stringify({ type: 'refund.processed', data: { i } });
      statuses.add((await post(payload, signed(payload))).status);
    }
    expect([...statuses]).toEqual([200]);
  });

  it('accepts the same signed delivery as a Lambda function URL (payload v2) event', async () => {
    const { handler } = await import('#functions/receive-partner-webhook.ts');
    const m = await aMerchant();
    const payload = JSON.stringify(
      paymentEvent({ account_number: m.merchant.account_number, amount: 1_234, session_id: nipSessionId() }),
    );
    const event = {
      version: '2.0',
      rawPath: '/',
      headers: { 'content-type': 'application/json', ...signed(payload) },
      requestContext: {
        requestId: 'url-req-1',
        http: { method: 'POST', path: '/', sourceIp: '203.0.113.1' },
      },
      body: Buffer.from(payload).toString('base64'),
      isBase64Encoded: true,
    } as unknown as APIGatewayProxyEvent;
    const result = await handler(event, lambdaContext);
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toStrictEqual({ status: 'success', message: 'Accepted' });
    expect(result.headers?.['X-Request-Id']).toBe('url-req-1');
    const unsigned = await handler(
      { ...event, headers: { 'content-type': 'application/json' } } as APIGatewayProxyEvent,
      lambdaContext,
    );
    expect(unsigned.statusCode).toBe(401);
  });

  it('is served at both paths and rejects GET with 405', async () => {
    const payload = body();
    const prefixed = await call(gateway, 'POST', '/api/v1/developer/webhooks/payments', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', ...signed(payload) },
    });
    expect(prefixed.status).toBe(200);
    expect((await call(gateway, 'GET', '/webhooks/payments')).status).toBe(405);
    expect((await deliver(gateway, JSON.parse(payload))).status).toBe(200);
  });
});
