import { describe, expect, it } from 'vitest';
import { awsAttemptTimeout } from '#shared/deadline.ts';
import { webhookHandler } from '#shared/http/stack.ts';
import { handler } from '#test/fixtures/functions/echo.ts';
import { handler as echoParam } from '#test/fixtures/functions/echo-param.ts';
import { apiEvent, jsonEvent, lambdaContext } from '#test/support/events.ts';

const invoke = async (event: ReturnType<typeof apiEvent>) => {
  const result = await handler(event, lambdaContext);
  return { ...result, json: JSON.parse(result.body) as Record<string, unknown> };
};

describe('the shared HTTP stack', () => {
  it('wraps a handler reply in the success envelope with the JSON content type and request id', async () => {
    const result = await invoke(jsonEvent({ amount: 100 }));
    expect(result.statusCode).toBe(201);
    expect(result.json).toEqual({ status: 'success', message: 'Echoed', data: { amount: 100 } });
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json; charset=utf-8',
      'X-Request-Id': 'req-test-1',
    });
  });

  it("bounds the handler's AWS calls by its function's time, and leaves the caller's unbounded", async () => {
    // lambdaContext: 10 s left; attempts end half a second before.
    const result = await invoke(jsonEvent({ amount: 1, note: 'time left' }));
    const attemptMs = (result.json.data as { attempt_ms: number }).attempt_ms;
    expect(attemptMs).toBeGreaterThan(9_000);
    expect(attemptMs).toBeLessThanOrEqual(9_500);
    // Was: the deadline stayed with whatever awaited the handler (the bench's in-process calls).
    expect(awsAttemptTimeout(60_000)).toBe(60_000);
  });

  it("bounds a partner webhook's AWS calls by its function's time too", async () => {
    const webhook = webhookHandler('receive-partner-webhook', async () => ({
      message: 'Time left',
      data: { attempt_ms: awsAttemptTimeout(60_000) },
    }));
    const result = await webhook(jsonEvent({}), lambdaContext);
    const attemptMs = (JSON.parse(result.body) as { data: { attempt_ms: number } }).data.attempt_ms;
    expect(attemptMs).toBeGreaterThan(9_000);
    expect(attemptMs).toBeLessThanOrEqual(9_500);
    expect(awsAttemptTimeout(60_000)).toBe(60_000);
  });

  it("hands a partner webhook the caller's address as API Gateway saw it, never a header's", async () => {
    // PAYSTACK_WEBHOOK_IPS compares this address: a spoofable X-Forwarded-For must not stand in for it.
    const seen: (string | undefined)[] = [];
    const webhook = webhookHandler('receive-partner-webhook', async ({ sourceIp }) => {
      seen.push(sourceIp);
      return { message: 'Accepted' };
    });
    await webhook(jsonEvent({}, { 'X-Forwarded-For': '52.31.139.75' }), lambdaContext);
    const v2 = {
      ...jsonEvent({}, { 'x-forwarded-for': '52.31.139.75' }),
      requestContext: { requestId: 'url-1', http: { method: 'POST', path: '/', sourceIp: '198.51.100.4' } },
    } as unknown as Parameters<typeof webhook>[0];
    await webhook(v2, lambdaContext);
    expect(seen).toEqual(['203.0.113.10', '198.51.100.4']);
  });

  it('makes up a request id when the event has none', async () => {
    const event = jsonEvent({ amount: 1 });
    event.requestContext = {} as typeof event.requestContext;
    const result = await invoke(event);
    expect(result.headers?.['X-Request-Id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('rejects unknown fields, naming each', async () => {
    const result = await invoke(jsonEvent({ amount: 100, amuont: 5, extra: true }));
    expect(result.statusCode).toBe(400);
    expect(result.json).toMatchObject({ status: 'error', code: 'validation_error' });
    expect(result.json.errors).toEqual(
      expect.arrayContaining([
        { field: 'amuont', message: 'Unknown field' },
        { field: 'extra', message: 'Unknown field' },
      ]),
    );
  });

  it.each([
    ['a string', '100'],
    ['a fraction', 100.5],
    ['zero', 0],
    ['a negative number', -100],
    ['an unsafe integer', 2 ** 53],
    ['null', null],
  ])('rejects an amount that is %s', async (_label, amount) => {
    const result = await invoke(jsonEvent({ amount }));
    expect(result.statusCode).toBe(400);
    expect(result.json.code).toBe('validation_error');
    expect(result.json.errors).toEqual([expect.objectContaining({ field: 'amount' })]);
  });

  it('rejects a missing field', async () => {
    const result = await invoke(jsonEvent({}));
    expect(result.statusCode).toBe(400);
    expect(result.json.errors).toEqual([expect.objectContaining({ field: 'amount' })]);
  });

  it('answers malformed JSON with 400 validation_error', async () => {
    const result = await invoke(jsonEvent('{"amount": 1'));
    expect(result.statusCode).toBe(400);
    expect(result.json).toMatchObject({ code: 'validation_error', message: 'Malformed JSON body' });
  });

  it('answers a JSON array or scalar body with 400', async () => {
    for (const body of ['[1,2]', '42', 'null']) {
      const result = await invoke(jsonEvent(body));
      expect(result.statusCode).toBe(400);
      expect(result.json.code).toBe('validation_error');
    }
  });

  it('answers a non-JSON body with 415 and a missing content type too', async () => {
    const form = await invoke(apiEvent({ headers: { 'content-type': 'text/plain' }, body: 'amount=1' }));
    expect(form.statusCode).toBe(415);
    expect(form.json.code).toBe('unsupported_media_type');
    const none = await invoke(apiEvent({ body: '{"amount":1}' }));
    expect(none.statusCode).toBe(415);
  });

  it('accepts header names in any case and a charset parameter', async () => {
    const result = await invoke(
      jsonEvent({ amount: 1 }, { 'CONTENT-TYPE': 'Application/JSON; charset=UTF-8' }),
    );
    expect(result.statusCode).toBe(201);
  });

  it('answers a body over 16 KiB with 413, counting bytes not characters', async () => {
    const ascii = await invoke(jsonEvent({ amount: 1, note: 'a'.repeat(16 * 1024) }));
    expect(ascii.statusCode).toBe(413);
    expect(ascii.json.code).toBe('payload_too_large');
    const multibyte = await invoke(jsonEvent({ amount: 1, note: '₦'.repeat(6000) }));
    expect(multibyte.statusCode).toBe(413);
    const fits = await invoke(jsonEvent({ amount: 1, note: 'a'.repeat(16 * 1024 - 40) }));
    expect(fits.statusCode).toBe(201);
  });

  it('maps a typed domain error to its status and code', async () => {
    const result = await invoke(jsonEvent({ amount: 1, note: 'conflict' }));
    expect(result.statusCode).toBe(409);
    expect(result.json).toEqual({
      status: 'error',
      message: 'Reference already used',
      code: 'duplicate_reference',
    });
  });

  it('answers an unexpected error with a 500 that reveals nothing', async () => {
    const result = await invoke(jsonEvent({ amount: 1, note: 'explode' }));
    expect(result.statusCode).toBe(500);
    expect(result.json).toEqual({
      status: 'error',
      message: 'An internal error occurred',
      code: 'internal_error',
    });
    expect(result.body).not.toMatch(/secret|srv|Error|stack/);
    expect(result.headers?.['X-Request-Id']).toBe('req-test-1');
  });

  it('ignores a __proto__ key instead of polluting objects, and reports it as unknown', async () => {
    const result = await invoke(jsonEvent('{"amount":1,"__proto__":{"polluted":true}}'));
    expect(result.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('path parameters, as API Gateway (REST) passes them: percent-encoded as sent', () => {
  /** The event API Gateway makes of `GET /echo/<sent>`: the parameter exactly as it was in the URL. */
  const received = async (sent: string) => {
    const event = apiEvent({
      resource: '/echo/{reference}',
      path: `/echo/${sent}`,
      httpMethod: 'GET',
      pathParameters: { reference: sent },
    });
    const result = await echoParam(event, lambdaContext);
    expect(result.statusCode).toBe(200);
    return (JSON.parse(result.body) as { data: { reference: string } }).data.reference;
  };

  it.each([
    ['a reversal reference', 'reversal:trf-2026-0042'],
    ['spaces and a slash', 'inv 42/b'],
    ['a percent sign', '100%'],
    ['non-ASCII', 'réf-ñ'],
  ])('decodes %s once, in the handler stack', async (_label, reference) => {
    expect(await received(encodeURIComponent(reference))).toBe(reference);
  });

  it('decodes exactly once: an encoded escape stays an escape', async () => {
    expect(await received(encodeURIComponent(encodeURIComponent('reversal:x')))).toBe('reversal%3Ax');
  });

  it('keeps a malformed escape as sent (it then names nothing)', async () => {
    expect(await received('abc%E0%A4%A')).toBe('abc%E0%A4%A');
  });
});
