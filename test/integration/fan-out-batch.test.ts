import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/fan-out-events.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { type EventRecord, newEvent } from '#shared/events/events.ts';
import { firstDeliveryId, getDelivery } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';
import { listingCalls } from '#test/support/sdk-calls.ts';

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
    const { result: answer, calls } = await listingCalls(dynamo, () =>
      handler(streamOf([events[0] as EventRecord, events[1] as EventRecord, broken])),
    );
    const queries = calls.filter((command) => command.startsWith('Query')).length;
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

/** Runs `act` with every SQS call listed; `refuse` says which calls fail. */
const withSqsCalls = <T>(
  act: () => Promise<T>,
  refuse: (command: string, input: { Entries?: { Id?: string }[] }) => boolean = () => false,
) =>
  listingCalls(sqs, act, (command, input) => {
    if (refuse(command, input)) throw new Error('SQS unavailable');
  });

describe("the fan-out's queueing", () => {
  const twelveEvents = async () => {
    const { merchant } = await aMerchant();
    const { endpoint } = await createEndpoint(merchant.merchant_id, {
      url: receiver.url,
      events: ['payment.received'],
    });
    const at = new Date().toISOString();
    const events = Array.from({ length: 12 }, () =>
      newEvent(merchant.merchant_id, 'payment.received', { transaction: { reference: 'r' } }, at),
    );
    const deliveryOf = (event: EventRecord) =>
      getDelivery({
        merchant_id: merchant.merchant_id,
        event_id: event.event_id,
        delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      });
    return { events, deliveryOf };
  };

  it("queues a batch's first attempts together, ten to a SendMessageBatch, never one by one", async () => {
    const { events, deliveryOf } = await twelveEvents();
    const { result, calls } = await withSqsCalls(() => handler(streamOf(events)));
    expect(result.batchItemFailures).toEqual([]);
    expect(calls).toEqual(['SendMessageBatchCommand', 'SendMessageBatchCommand']);
    for (const event of events) expect(await deliveryOf(event), event.event_id).toBeDefined();
  });

  it('reports the first record whose attempt was not queued, so it and those after it come again', async () => {
    const { events, deliveryOf } = await twelveEvents();
    // The second SendMessageBatch (the 11th and 12th messages) fails as a whole.
    const { result } = await withSqsCalls(
      () => handler(streamOf(events)),
      (command, input) => command === 'SendMessageBatchCommand' && input.Entries?.[0]?.Id === '10',
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '11' }]);
    // Fanned out again from that record: its delivery exists, nothing tried, so it is queued again.
    const again = await withSqsCalls(() => handler(streamOf(events.slice(10))));
    expect(again.result.batchItemFailures).toEqual([]);
    expect(again.calls).toEqual(['SendMessageBatchCommand']);
    for (const event of events) expect(await deliveryOf(event), event.event_id).toBeDefined();
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
