import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  policy.allowPrivate = true;
});

const codeOf = (error: unknown) => (error instanceof ApiError ? error.code : String(error));

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
    const event = newEvent(
      merchant.merchant_id,
      'payment.received',
      { transaction: { reference: 'ssrf-test' }, virtual_account: null },
      new Date().toISOString(),
    );
    // Stored directly, as a credit's transaction would store it.
    await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
    const message = {
      merchant_id: merchant.merchant_id,
      event_id: event.event_id,
      delivery_id: newDeliveryId(),
    };
    await createDelivery(message, endpoint.endpoint_id);
    const before = receiver.received.length;
    await deliver(message);
    const [delivery] = (await deliveriesOf(merchant.merchant_id, event.event_id)).filter(
      (d) => d.delivery_id === message.delivery_id,
    );
    expect(delivery?.attempts).toEqual([
      expect.objectContaining({
        status_code: null,
        error: expect.stringMatching(/^invalid_url: host resolves to a forbidden address \(loopback\)/),
      }),
    ]);
    expect(receiver.received.slice(before).filter((r) => r.headers['webhook-id'] === event.event_id)).toEqual(
      [],
    );
  });
});
