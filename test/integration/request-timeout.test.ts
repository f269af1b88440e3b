import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { REQUEST_TIMEOUT_MS } from '#shared/aws/request-handler.ts';
import { entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { type FaultProxy, startFaultProxy } from '#test/support/fault-proxy.ts';
import { aMerchant } from '#test/support/merchants.ts';

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
