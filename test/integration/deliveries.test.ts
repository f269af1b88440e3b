import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { parseWebhookSecrets } from '#shared/config.ts';
import { signatureProblem } from '#shared/crypto/standard-webhooks.ts';
import { newEvent } from '#shared/events/events.ts';
import { deliver } from '#shared/merchant-webhooks/deliver.ts';
import {
  createDelivery,
  type DeliveryMessage,
  deliveriesOf,
  newDeliveryId,
  recordAttempt,
} from '#shared/merchant-webhooks/deliveries.ts';
import {
  createEndpoint,
  deleteEndpoint,
  endpointItemKey,
  rotateSecret,
  signingSecrets,
} from '#shared/merchant-webhooks/endpoints.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';
import { listingCalls } from '#test/support/sdk-calls.ts';

describe('delivery records', () => {
  it('are created once: a repeated creation returns the stored delivery, attempts and all, in one call', async () => {
    const message = {
      merchant_id: 'mer_deliveries',
      event_id: `evt_${Date.now()}`,
      delivery_id: newDeliveryId(),
    };
    const first = await createDelivery(message, 'we_1');
    const attempt = { at: new Date().toISOString(), status_code: 503, error: null, duration_ms: 12 };
    expect(await recordAttempt(first, attempt, { status: 'pending', next_attempt_at: attempt.at })).toBe(
      true,
    );
    const again = await createDelivery(message, 'we_1');
    expect(again).toMatchObject({ delivery_id: message.delivery_id, status: 'pending', attempts: [attempt] });
    // The same attempt is never recorded twice (a duplicate message read the first state).
    expect(await recordAttempt(first, attempt, { status: 'delivered' })).toBe(false);
  });

  it("are listed oldest first, whatever their ids' order (GET /events/{id})", async () => {
    const message = { merchant_id: 'mer_deliveries', event_id: `evt_order_${Date.now()}` };
    // Ids against time: the table would list them z, m, a reversed.
    await createDelivery({ ...message, delivery_id: 'dlv_a' }, 'we_3', new Date('2026-11-23T10:00:02Z'));
    await createDelivery({ ...message, delivery_id: 'dlv_z' }, 'we_1', new Date('2026-11-23T10:00:00Z'));
    await createDelivery({ ...message, delivery_id: 'dlv_m' }, 'we_2', new Date('2026-11-23T10:00:01Z'));
    const listed = await deliveriesOf(message.merchant_id, message.event_id);
    expect(listed.map((delivery) => delivery.delivery_id)).toEqual(['dlv_z', 'dlv_m', 'dlv_a']);
  });
});

/**
 * An endpoint at `url` and a stored `payment.received` event of the merchant. The endpoint is
 * subscribed to another type: the test run's own pipeline leaves this event to the test.
 */
async function storedEventFor(merchantId: string, url: string, data: Record<string, unknown> = {}) {
  const { endpoint } = await createEndpoint(merchantId, { url, events: ['transfer.failed'] });
  const event = newEvent(merchantId, 'payment.received', data, new Date().toISOString());
  await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
  return { endpoint, event };
}

/**
 * A merchant's endpoint at a test receiver, a stored event, and its delivery to the endpoint
 * recorded and due (its message named), for `work`; the receiver closed after.
 */
async function withQueuedDelivery(
  work: (queued: {
    merchantId: string;
    endpointId: string;
    eventId: string;
    message: DeliveryMessage;
    endpointServer: Awaited<ReturnType<typeof startReceiver>>;
  }) => Promise<void>,
) {
  const { merchant } = await aMerchant();
  const endpointServer = await startReceiver();
  try {
    const { endpoint, event } = await storedEventFor(merchant.merchant_id, endpointServer.url);
    const message = {
      merchant_id: merchant.merchant_id,
      event_id: event.event_id,
      delivery_id: newDeliveryId(),
      endpoint_id: endpoint.endpoint_id,
    };
    await createDelivery(message, endpoint.endpoint_id);
    await work({
      merchantId: merchant.merchant_id,
      endpointId: endpoint.endpoint_id,
      eventId: event.event_id,
      message,
      endpointServer,
    });
  } finally {
    await endpointServer.close();
  }
}

describe('a delivery attempt', () => {
  it('reads its delivery, event and endpoint in one consistent call; a message queued before they named the endpoint still delivers, and its retry names it', async () => {
    const { merchant } = await aMerchant();
    // The first request is answered 200, the second 500 (a retry is due); any later one 200.
    const endpointServer = await startReceiver((n) => (n === 2 ? 500 : 200));
    try {
      const { endpoint, event } = await storedEventFor(merchant.merchant_id, endpointServer.url, {
        transaction: { reference: 'deliveries-test' },
      });
      const queued = async (message: DeliveryMessage) => {
        await createDelivery(message, endpoint.endpoint_id);
        return message;
      };
      const base = { merchant_id: merchant.merchant_id, event_id: event.event_id };
      const named = await queued({
        ...base,
        delivery_id: newDeliveryId(),
        endpoint_id: endpoint.endpoint_id,
      });
      const older = await queued({ ...base, delivery_id: newDeliveryId() });

      const reads: Record<string, unknown>[] = [];
      const first = await listingCalls(
        dynamo,
        () => deliver(named),
        (command, input) => {
          if (command === 'BatchGetItemCommand') reads.push(input.RequestItems as Record<string, unknown>);
        },
      );
      expect(first.calls).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect(reads).toEqual([
        Object.fromEntries(
          [tableName('webhookDeliveries'), tableName('events'), tableName('webhookEndpoints')].map(
            (table) => [table, expect.objectContaining({ ConsistentRead: true })],
          ),
        ),
      ]);

      const retries: string[] = [];
      const second = await listingCalls(dynamo, () =>
        listingCalls(
          sqs,
          () => deliver(older),
          (command, input) => {
            if (command === 'SendMessageCommand') retries.push(String(input.MessageBody));
          },
        ),
      );
      expect(second.calls).toEqual(['GetItemCommand', 'BatchGetItemCommand', 'UpdateItemCommand']);
      expect(retries.map((body) => JSON.parse(body))).toEqual([
        { ...older, endpoint_id: endpoint.endpoint_id },
      ]);

      const statuses = (await deliveriesOf(merchant.merchant_id, event.event_id)).map((d) => [
        d.delivery_id,
        d.status,
        d.attempts.map((attempt) => attempt.status_code),
      ]);
      expect(statuses.sort()).toEqual(
        [
          [named.delivery_id, 'delivered', [200]],
          [older.delivery_id, 'pending', [500]],
        ].sort(),
      );
    } finally {
      await endpointServer.close();
    }
  });

  it('is recorded at the time it was made, not when its batch began (a batch reads before it sends)', () =>
    withQueuedDelivery(async ({ merchantId, eventId, message, endpointServer }) => {
      // The batch's clock, read when its messages were taken: a minute before this attempt.
      const before = Date.now();
      await deliver(message, before - 60_000);
      const [delivery] = await deliveriesOf(merchantId, eventId);
      const at = Date.parse(delivery?.attempts[0]?.at ?? '');
      expect(delivery?.status).toBe('delivered');
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(endpointServer.received[0]?.at ?? 0);
    }));

  it('sends nothing to an endpoint deleted after its delivery was queued: the delivery ends failed (API.md §8)', () =>
    withQueuedDelivery(async ({ merchantId, endpointId, eventId, message, endpointServer }) => {
      // Deleted between the fan-out and the attempt (a retry's wait, or the queue's own).
      await deleteEndpoint(merchantId, endpointId);
      await deliver(message);
      expect(endpointServer.received).toEqual([]);
      const [delivery] = await deliveriesOf(merchantId, eventId);
      expect(delivery?.status).toBe('failed');
    }));

  it('is signed by a rotated-out secret for its 24 hours only, then by the current secret alone (API.md §8)', () =>
    withQueuedDelivery(async ({ merchantId, endpointId, message, endpointServer }) => {
      const before = Date.now();
      const rotated = await rotateSecret(merchantId, endpointId);
      const [old, current] = rotated.endpoint.secrets;
      const retiresIn = Date.parse(old?.retires_at ?? '') - before;
      expect(retiresIn).toBeGreaterThanOrEqual(24 * 3600_000);
      expect(retiresIn).toBeLessThan(24 * 3600_000 + 60_000);
      expect(await signingSecrets(rotated.endpoint)).toHaveLength(2);
      // Its 24 hours over: the stored expiry moved back past now, then the attempt.
      const retired = [{ ...old, retires_at: new Date(Date.now() - 1).toISOString() }, current];
      await dynamo.send(
        new UpdateCommand({
          ...endpointItemKey(merchantId, endpointId),
          UpdateExpression: 'SET secrets = :secrets',
          ExpressionAttributeValues: { ':secrets': retired },
        }),
      );
      await deliver(message);
      const [request] = endpointServer.received;
      const signature = String(request?.headers['webhook-signature']);
      expect(signature.split(' ')).toHaveLength(1);
      const signed = {
        id: String(request?.headers['webhook-id']),
        timestamp: String(request?.headers['webhook-timestamp']),
        signature,
        body: request?.body ?? '',
      };
      expect(signatureProblem(signed, parseWebhookSecrets(rotated.secret))).toBeUndefined();
    }));
});
