import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/fan-out-events.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { type EventRecord, newEvent } from '#shared/events/events.ts';
import { firstDeliveryId, getDelivery } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const streamOf = (events: readonly object[]) =>
  ({
    Records: events.map((event, i) => ({
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: String(i + 1),
        NewImage: marshall(event, { removeUndefinedValues: true }) as Record<string, AttributeValue>,
      },
    })),
  }) as unknown as DynamoDBStreamEvent;

describe('the events stream consumer (fan-out)', () => {
  it("fans a batch out in order, reads each merchant's endpoints once, and reports the first failure", async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const { endpoint } = await createEndpoint(m, { url: receiver.url, events: ['payment.received'] });
    const at = new Date().toISOString();
    const events: EventRecord[] = [1, 2, 3].map(() =>
      newEvent(m, 'payment.received', { transaction: { reference: 'r' } }, at),
    );
    // The third record's merchant id is empty: reading its endpoints fails (an empty key).
    const broken = { ...(events[2] as EventRecord), merchant_id: '' };
    let queries = 0;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (/^Query/.test(context.commandName ?? '')) queries++;
        return next(args);
      },
      { step: 'initialize', name: 'countQueries' },
    );
    let answer: Awaited<ReturnType<typeof handler>>;
    try {
      answer = await handler(streamOf([events[0] as EventRecord, events[1] as EventRecord, broken]));
    } finally {
      dynamo.middlewareStack.remove('countQueries');
    }
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: '3' }]);
    // One read of the merchant's endpoints for its two events, one for the broken record.
    expect(queries).toBe(2);
    for (const event of events.slice(0, 2)) {
      const delivery = await getDelivery({
        merchant_id: m,
        event_id: event.event_id,
        delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      });
      expect(delivery, event.event_id).toMatchObject({ endpoint_id: endpoint.endpoint_id });
    }
  });
});

describe('an event older than an endpoint', () => {
  it('is not sent to it when the stream is read again (only redelivery sends it)', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const { endpoint: before } = await createEndpoint(m, { url: receiver.url });
    const old = newEvent(
      m,
      'payment.received',
      { transaction: { reference: 'old' } },
      new Date().toISOString(),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { endpoint: after } = await createEndpoint(m, { url: receiver.url });

    // The stream read again from its start (a restarted local poller, a retried batch on AWS).
    const answer = await handler(streamOf([old]));
    expect(answer.batchItemFailures).toEqual([]);
    const deliveryTo = (endpointId: string) =>
      getDelivery({
        merchant_id: m,
        event_id: old.event_id,
        delivery_id: firstDeliveryId(old.event_id, endpointId),
      });
    expect(await deliveryTo(before.endpoint_id)).toMatchObject({ endpoint_id: before.endpoint_id });
    expect(await deliveryTo(after.endpoint_id)).toBeUndefined();
  });
});
