import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { getApiKey, listApiKeys } from '#shared/api-keys/store.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { REQUEST_TIMEOUT_MS } from '#shared/aws/request-handler.ts';
import { ANSWER_RESERVE_MS, FINAL_ANSWER_MS, MIN_AWS_ATTEMPT_MS } from '#shared/deadline.ts';
import { entriesOf } from '#shared/ledger/audit.ts';
import { createDelivery, getDelivery, newDeliveryId } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint, getEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { type FaultProxy, startFaultProxy } from '#test/support/fault-proxy.ts';
import { aMerchant, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';

// The service's DynamoDB client behind a connection that takes a request and goes silent: each
// attempt ends at REQUEST_TIMEOUT_MS and the SDK retries it on a new connection, where before it
// waited for the SDK's 300 s idle-socket default. The modules are imported afresh with the proxy as
// their endpoint; the checks read DynamoDB Local directly, through this file's own imports.
let proxy: FaultProxy;
const savedEndpoint = process.env.DYNAMODB_ENDPOINT;

beforeAll(async () => {
  proxy = await startFaultProxy(savedEndpoint as string);
});
afterEach(() => {
  process.env.DYNAMODB_ENDPOINT = savedEndpoint;
});
afterAll(() => proxy.close());

async function throughProxy<T>(path: string): Promise<T> {
  vi.resetModules();
  process.env.DYNAMODB_ENDPOINT = proxy.url;
  return (await import(path)) as T;
}

const timed = async <T>(work: () => Promise<T>) => {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
};

describe('a DynamoDB request whose connection goes silent', () => {
  it('is retried on a new connection once its attempt times out, and answers', async () => {
    const { merchant } = await aMerchant();
    const store = await throughProxy<typeof import('#shared/merchants/store.ts')>(
      '#shared/merchants/store.ts',
    );
    proxy.faultNext('stall', 'DynamoDB_20120810.GetItem');
    const before = proxy.connections;
    const { result, ms } = await timed(() => store.getMerchant(merchant.merchant_id));
    expect(result?.merchant_id).toBe(merchant.merchant_id);
    expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
    expect(proxy.connections - before).toBe(2);
  });

  it('applies a ledger posting exactly once when the answer to its committed transaction is lost', async () => {
    const { merchant } = await aMerchant();
    const ledger = await throughProxy<typeof import('#shared/ledger/ledger.ts')>('#shared/ledger/ledger.ts');
    const entryId = `payment:timeout-${randomUUID()}`;
    // The transaction reaches DynamoDB and commits; its answer never comes back. The retry carries
    // the same idempotency token, so DynamoDB answers it as the same transaction.
    proxy.faultNext('swallow', 'DynamoDB_20120810.TransactWriteItems');
    const { result, ms } = await timed(() =>
      ledger.post({
        entryId,
        merchantId: merchant.merchant_id,
        amount: 12_345,
        category: 'payment',
        reference: entryId,
      }),
    );
    expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(result).toMatchObject({
      applied: true,
      entry: { entry_id: entryId, amount: 12_345, balance_after: 12_345 },
    });
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(12_345);
    expect((await entriesOf(merchant.merchant_id)).map((entry) => entry.entry_id)).toEqual([entryId]);
  });
});

describe('a DynamoDB request whose connection goes silent near the end of its function', () => {
  /** Runs `work` as an invocation with `remainingMs` left would (`shared/http/stack.ts` sets it so). */
  async function inInvocation<T>(remainingMs: number, work: () => Promise<T>) {
    // The deadline module of the modules just imported through the proxy (`throughProxy`).
    const { withInvocationDeadline } = await import('#shared/deadline.ts');
    const { result, ms } = await timed(() =>
      withInvocationDeadline(
        remainingMs,
        (): Promise<{ value?: T; error?: unknown }> =>
          work().then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          ),
      ),
    );
    return { ...result, ms };
  }

  it('is cut before the function ends and not tried again (was: 5 s, then a second attempt)', async () => {
    const { merchant } = await aMerchant();
    const store = await throughProxy<typeof import('#shared/merchants/store.ts')>(
      '#shared/merchants/store.ts',
    );
    proxy.faultNext('stall', 'DynamoDB_20120810.GetItem');
    const before = proxy.connections;
    const { error, ms } = await inInvocation(2_000, () => store.getMerchant(merchant.merchant_id));
    expect(error).toMatchObject({ name: 'OutOfTime' });
    expect(ms).toBeGreaterThanOrEqual(2_000 - FINAL_ANSWER_MS - MIN_AWS_ATTEMPT_MS);
    expect(ms).toBeLessThan(2_000);
    // The one attempt's connection; none for a second attempt.
    expect(proxy.connections - before).toBe(1);
  });

  it('leaves a transfer the partner answered pending, answered before the function ends (was: past it)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `late-record-${randomUUID().slice(0, 8)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000, { handedOver: false });
    const transfer = await getTransaction(merchant.merchant_id, reference);
    const { dispatchTransfer } = await throughProxy<typeof import('#shared/transfers/dispatch.ts')>(
      '#shared/transfers/dispatch.ts',
    );
    // The sandbox pays it at once; the write that records its success goes silent.
    proxy.faultNext('stall', 'DynamoDB_20120810.TransactWriteItems');
    const remainingMs = ANSWER_RESERVE_MS + 1_000;
    const { value, error, ms } = await inInvocation(remainingMs, () =>
      dispatchTransfer(transfer as NonNullable<typeof transfer>),
    );
    expect(error).toBeUndefined();
    expect(value).toMatchObject({ reference, status: 'pending' });
    expect(ms).toBeLessThan(remainingMs);
    // Handed over once; the partner's webhook (to the test stack, not through the proxy) or the
    // requery settles it. Debited once, whatever it stands at now.
    expect((await getTransaction(merchant.merchant_id, reference))?.dispatches).toBe(1);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(20_000 - 5_000 - 1_000);
  });
});

// A single-item write has no idempotency token: the SDK's retry of one that committed fails the
// write's own condition. Each such write recognises its own work when it reads the item back
// (`shared/aws/written-once.ts`); without that, each of these answered as the comments say.
describe('a conditional single-item write whose answer is lost after it committed', () => {
  const UPDATE = 'DynamoDB_20120810.UpdateItem';
  const PUT = 'DynamoDB_20120810.PutItem';

  /**
   * A pending transfer handed over once, its resends held for an hour: no requery (this file's or
   * another's, on the same DynamoDB Local) counts a hand-over of it meanwhile. With the store
   * module behind the proxy.
   */
  async function aHandedOverTransfer() {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `lost-count-${randomUUID().slice(0, 8)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const store = await throughProxy<typeof import('#shared/transactions/store.ts')>(
      '#shared/transactions/store.ts',
    );
    return { merchant, reference, store };
  }

  it("counts a transfer's hand-over once, with the hand-over before it (was: a phantom second count)", async () => {
    const { merchant, reference, store } = await aHandedOverTransfer();
    const first = await store.recordDispatch(merchant.merchant_id, reference);
    expect(first).toMatchObject({ dispatch: 2, unposted: 0, previousAt: expect.any(Number) });
    proxy.faultNext('swallow', UPDATE);
    const second = await store.recordDispatch(merchant.merchant_id, reference);
    expect(second).toEqual({ dispatch: 3, unposted: 0, at: expect.any(Number), previousAt: first?.at });
    expect((await getTransaction(merchant.merchant_id, reference))?.dispatches).toBe(3);
  });

  it('does not take as its own a count made since by code from before count_id (a deploy in progress)', async () => {
    const { merchant, reference, store } = await aHandedOverTransfer();
    proxy.faultNext('swallow', UPDATE);
    const counting = store.recordDispatch(merchant.merchant_id, reference);
    // While its answer is lost, the old code counts the next hand-over (no count_id, its own time).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('transactions'),
        Key: { merchant_id: merchant.merchant_id, reference },
        UpdateExpression: 'ADD dispatches :one SET dispatched_at = :at',
        ExpressionAttributeValues: { ':one': 1, ':at': Date.now() },
      }),
    );
    // Taken as its own, it would answer #3 (the old code's) with the time before its own count: a
    // refusal of its resend could then be final while the old code's send may still be made.
    expect(await counting).toBeUndefined();
    expect((await getTransaction(merchant.merchant_id, reference))?.dispatches).toBe(3);
  });

  it('records a delivery attempt and keeps its retry (was: false, and the retry never queued)', async () => {
    const message = {
      merchant_id: 'mer_lostanswer',
      event_id: `evt_${randomUUID()}`,
      delivery_id: newDeliveryId(),
    };
    const delivery = await createDelivery(message, 'we_lostanswer');
    const store = await throughProxy<typeof import('#shared/merchant-webhooks/deliveries.ts')>(
      '#shared/merchant-webhooks/deliveries.ts',
    );
    proxy.faultNext('swallow', UPDATE);
    const attempt = { at: new Date().toISOString(), status_code: 503, error: null, duration_ms: 12 };
    const next = new Date(Date.now() + 60_000).toISOString();
    expect(await store.recordAttempt(delivery, attempt, { status: 'pending', next_attempt_at: next })).toBe(
      true,
    );
    expect(await getDelivery(message)).toMatchObject({
      status: 'pending',
      attempts: [attempt],
      next_attempt_at: next,
    });
    // A duplicate message's attempt recorded since, even one alike to the millisecond, is another
    // write: false, so that it queues no second chain of retries.
    proxy.faultNext('swallow', UPDATE);
    expect(await store.recordAttempt(delivery, attempt, { status: 'pending', next_attempt_at: next })).toBe(
      false,
    );
    expect((await getDelivery(message))?.attempts).toHaveLength(1);
  });

  it("rotates an endpoint's secret once (was: twice, a version never shown signing for 24 h)", async () => {
    const { merchant } = await aMerchant();
    const receiver = await startReceiver();
    try {
      const { endpoint } = await createEndpoint(merchant.merchant_id, {
        url: receiver.url,
        events: ['transfer.failed'],
      });
      const endpoints = await throughProxy<typeof import('#shared/merchant-webhooks/endpoints.ts')>(
        '#shared/merchant-webhooks/endpoints.ts',
      );
      proxy.faultNext('swallow', UPDATE);
      const rotated = await endpoints.rotateSecret(merchant.merchant_id, endpoint.endpoint_id);
      const stored = await getEndpoint(merchant.merchant_id, endpoint.endpoint_id);
      expect(stored?.secrets.map((s) => s.version)).toEqual([1, 2]);
      expect(rotated.endpoint.secrets).toEqual(stored?.secrets);
    } finally {
      await receiver.close();
    }
  });

  it('makes and rotates once for an Idempotency-Key whose transaction answer is lost, answering its secret', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const endpoints = await throughProxy<typeof import('#shared/merchant-webhooks/endpoints.ts')>(
      '#shared/merchant-webhooks/endpoints.ts',
    );
    proxy.faultNext('swallow', 'DynamoDB_20120810.TransactWriteItems');
    const made = await endpoints.createEndpoint(m, { url: 'http://127.0.0.1:9/lost' }, 'lost-create');
    expect(await endpoints.listEndpoints(m)).toEqual([made.endpoint]);
    const again = await endpoints.createEndpoint(m, { url: 'http://127.0.0.1:9/lost' }, 'lost-create');
    expect([again.endpoint.endpoint_id, again.secret]).toEqual([made.endpoint.endpoint_id, made.secret]);
    proxy.faultNext('swallow', 'DynamoDB_20120810.TransactWriteItems');
    const rotated = await endpoints.rotateSecret(m, made.endpoint.endpoint_id, 'lost-rotation');
    const stored = await getEndpoint(m, made.endpoint.endpoint_id);
    expect(stored?.secrets.map((s) => s.version)).toEqual([1, 2]);
    const replayed = await endpoints.rotateSecret(m, made.endpoint.endpoint_id, 'lost-rotation');
    expect(replayed.secret).toBe(rotated.secret);
    expect(replayed.secret).not.toBe(made.secret);
  });

  it('creates an API key and answers it (was: a 500, the key stored and listed)', async () => {
    const { merchant } = await aMerchant();
    const keys = await throughProxy<typeof import('#shared/api-keys/store.ts')>('#shared/api-keys/store.ts');
    proxy.faultNext('swallow', PUT);
    const { record } = await keys.createApiKey(merchant.merchant_id);
    expect(await getApiKey(record.api_key)).toMatchObject({
      secret_hash: record.secret_hash,
      status: 'active',
    });
    expect(await listApiKeys(merchant.merchant_id)).toHaveLength(2);
  });

  it('stores an account session and answers its id (was: a 500 for a stored session)', async () => {
    const sessions = await throughProxy<typeof import('#shared/accounts/sessions.ts')>(
      '#shared/accounts/sessions.ts',
    );
    proxy.faultNext('swallow', PUT);
    const account = {
      account_name: 'ADA OBI',
      account_number: '0000014579',
      bank: { code: '058', name: 'GTBank' },
    };
    const id = await sessions.createSession('mer_lostanswer', account);
    expect(await sessions.accountOfSession('mer_lostanswer', id)).toMatchObject(account);
  });
});
