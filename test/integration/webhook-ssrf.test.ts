import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { config } from '#shared/config.ts';
import { ApiError } from '#shared/errors.ts';
import { newEvent } from '#shared/events/events.ts';
import { deliver } from '#shared/merchant-webhooks/deliver.ts';
import { createDelivery, deliveriesOf, newDeliveryId } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * SSRF with the local override off, as on AWS: registration refuses loopback, private and metadata
 * targets (a hostname resolving to one included), and a delivery refuses them again at send time
 * (an endpoint registered while allowed, then no longer allowed, is never called).
 */
const policy = config.merchantWebhooks as { allowPrivate: boolean };

/**
 * `hook.rebind.invalid` resolves, through the lookup the URL check asks, to loopback: the name has
 * no record anywhere else (`.invalid`), so a delivery that looks it up again (at connect time, as
 * DNS rebinding needs) reaches nothing.
 */
const { REBIND_HOST } = vi.hoisted(() => ({ REBIND_HOST: 'hook.rebind.invalid' }));
vi.mock('node:dns/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = ((hostname: string, options?: unknown) =>
    hostname === REBIND_HOST
      ? Promise.resolve([{ address: '127.0.0.1', family: 4 }])
      : actual.lookup(hostname, options as never)) as typeof actual.lookup;
  return { ...actual, lookup, default: { ...actual, lookup } };
});
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  policy.allowPrivate = true;
});

const codeOf = (error: unknown) => (error instanceof ApiError ? error.code : String(error));

/**
 * A `payment.received` event stored directly (as a credit's transaction would store it), queued for
 * one endpoint and attempted once by `deliver()`: the event's id and the delivery as it stands.
 */
async function deliverOnce(merchantId: string, endpointId: string, reference: string) {
  const event = newEvent(
    merchantId,
    'payment.received',
    { transaction: { reference }, virtual_account: null },
    new Date().toISOString(),
  );
  await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
  const message = { merchant_id: merchantId, event_id: event.event_id, delivery_id: newDeliveryId() };
  await createDelivery(message, endpointId);
  await deliver(message);
  const [delivery] = (await deliveriesOf(merchantId, event.event_id)).filter(
    (d) => d.delivery_id === message.delivery_id,
  );
  return { eventId: event.event_id, delivery };
}

describe('merchant webhook URLs with MERCHANT_WEBHOOK_ALLOW_PRIVATE off (as on AWS)', () => {
  it('refuses loopback, private, metadata and link-local targets, and hostnames that resolve to them', async () => {
    policy.allowPrivate = false;
    const { merchant } = await aMerchant();
    for (const url of [
      receiver.url.replace('http://', 'https://'),
      'https://localhost/hooks',
      'https://10.0.0.8/hooks',
      'https://192.168.1.10/hooks',
      'https://100.64.0.1/hooks',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/hooks',
      'https://[fd00:ec2::254]/',
      'http://93.184.216.34/hooks',
    ]) {
      const refused = await createEndpoint(merchant.merchant_id, { url }).then(
        () => 'accepted',
        (error: unknown) => codeOf(error),
      );
      expect(refused, url).toBe('invalid_url');
    }
  });

  it('refuses the target again at delivery: the attempt fails with invalid_url and nothing is sent', async () => {
    const { merchant } = await aMerchant();
    policy.allowPrivate = true;
    // Subscribed to another type: the test run's own pipeline (which allows loopback) must not
    // deliver this event; only the delivery this test drives, with the override off, may try.
    const { endpoint } = await createEndpoint(merchant.merchant_id, {
      url: receiver.url.replace('http://127.0.0.1', 'https://localhost'),
      events: ['transfer.failed'],
    });
    policy.allowPrivate = false;
    const before = receiver.received.length;
    const { eventId, delivery } = await deliverOnce(merchant.merchant_id, endpoint.endpoint_id, 'ssrf-test');
    expect(delivery?.attempts).toEqual([
      expect.objectContaining({
        status_code: null,
        error: expect.stringMatching(/^invalid_url: host resolves to a forbidden address \(loopback\)/),
      }),
    ]);
    expect(receiver.received.slice(before).filter((r) => r.headers['webhook-id'] === eventId)).toEqual([]);
  });
});

describe('a merchant webhook delivery to a hostname', () => {
  it('delivers to the address it checked, never looking the host up again (DNS rebinding)', async () => {
    const { merchant } = await aMerchant();
    const port = new URL(receiver.url).port;
    // Subscribed to another type, as above: only the delivery this test drives may try.
    const { endpoint } = await createEndpoint(merchant.merchant_id, {
      url: `http://${REBIND_HOST}:${port}/hooks`,
      events: ['transfer.failed'],
    });
    const { eventId, delivery } = await deliverOnce(
      merchant.merchant_id,
      endpoint.endpoint_id,
      'rebind-test',
    );
    expect(delivery?.attempts).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === eventId)).toEqual([
      expect.objectContaining({ headers: expect.objectContaining({ host: `${REBIND_HOST}:${port}` }) }),
    ]);
  });
});
