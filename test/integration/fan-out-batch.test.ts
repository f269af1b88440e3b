import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/fan-out-events.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { EVENT_NOT_FANNED_OUT } from '#shared/definitions/alerts.ts';
import { type EventRecord, newEvent } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import { firstDeliveryId, getDelivery } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';
import { listingCalls } from '#test/support/sdk-calls.ts';
import { streamOf } from '#test/support/streams.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

describe('the events stream consumer (fan-out)', () => {
  const threeEvents = async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const { endpoint } = await createEndpoint(m, { url: receiver.url, events: ['payment.received'] });
    const at = new Date().toISOString();
    const events: EventRecord[] = [1, 2, 3].map(() =>
      newEvent(m, 'payment.received', { transaction: { reference: 'r' } }, at),
    );
    const deliveryOf = (event: EventRecord) =>
      getDelivery({
        merchant_id: m,
        event_id: event.event_id,
        delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      });
    return { m, events, deliveryOf };
  };

  it("fans a batch out in order, reads each merchant's endpoints once, and reports the first failure that may pass", async () => {
    const { events, deliveryOf } = await threeEvents();
    // DynamoDB throttles the second record's delivery write (after the SDK's own retries).
    let puts = 0;
    const { result: answer, calls } = await listingCalls(
      dynamo,
      () => handler(streamOf(events)),
      (command) => {
        if (command === 'PutItemCommand' && ++puts === 2) {
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
            name: 'ProvisionedThroughputExceededException',
            $fault: 'client',
          });
        }
      },
    );
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    // One read of the merchant's endpoints for the batch; nothing done for the third record.
    expect(calls.filter((command) => command.startsWith('Query'))).toHaveLength(1);
    expect(calls.filter((command) => command.startsWith('PutItem'))).toHaveLength(2);
    expect(await deliveryOf(events[0] as EventRecord)).toBeDefined();
    expect(await deliveryOf(events[2] as EventRecord)).toBeUndefined();
  });

  it('skips a record that can never be fanned out, logging the alarmed line, and fans out those after it', async () => {
    const { events, deliveryOf } = await threeEvents();
    // The second record's merchant id is empty: DynamoDB refuses the read of its endpoints as sent.
    const broken = { ...(events[1] as EventRecord), merchant_id: '' };
    const logged = vi.spyOn(logger, 'error');
    let answer: Awaited<ReturnType<typeof handler>>;
    let errors: unknown[][];
    try {
      answer = await handler(streamOf([events[0] as EventRecord, broken, events[2] as EventRecord]));
    } finally {
      errors = [...logged.mock.calls];
      logged.mockRestore();
    }
    expect(answer.batchItemFailures).toEqual([]);
    // The line names the event (its id starts with its time), for `npm run ops -- events fan-out`.
    expect(errors).toEqual([
      [
        EVENT_NOT_FANNED_OUT,
        expect.objectContaining({ sequence: '2', merchant_id: '', event_id: broken.event_id }),
      ],
    ]);
    expect(await deliveryOf(events[0] as EventRecord)).toBeDefined();
    expect(await deliveryOf(events[2] as EventRecord)).toBeDefined();
  });

  it('skips a record whose image cannot be read (an attribute value of no type) rather than retry it for ever', async () => {
    const { events, deliveryOf } = await threeEvents();
    const stream = streamOf(events);
    const second = stream.Records[1]?.dynamodb as { NewImage: Record<string, unknown> };
    // As a stream once gave a test's empty map: unmarshall throws a plain Error for it.
    second.NewImage = { ...second.NewImage, data: {} };
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => {});
    let answer: Awaited<ReturnType<typeof handler>>;
    let lines: unknown[];
    try {
      answer = await handler(stream);
    } finally {
      lines = logged.mock.calls.map(([line]) => line);
      logged.mockRestore();
    }
    expect(answer.batchItemFailures).toEqual([]);
    expect(lines).toEqual([EVENT_NOT_FANNED_OUT]);
    expect(await deliveryOf(events[2] as EventRecord)).toBeDefined();
  });
});

type SentEntry = { Id: string; MessageBody: string };

/**
 * Runs `act` with every SendMessageBatch seen: the entries of each call, in order. `refuse(id, n)`
 * says whether SQS refuses the entry with that Id on the n-th call: a call whose entries are all
 * refused fails as a whole; otherwise the others are sent and the refused ones come back `Failed`.
 */
async function withSqsBatches<T>(
  act: () => Promise<T>,
  refuse: (id: string, call: number) => boolean = () => false,
) {
  const batches: SentEntry[][] = [];
  const name = `sqsBatches-${Math.random()}`;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args);
      const input = args.input as { Entries: SentEntry[] };
      batches.push(input.Entries);
      const call = batches.length;
      const refused = input.Entries.filter((entry) => refuse(entry.Id, call));
      if (refused.length === input.Entries.length) throw new Error('SQS unavailable');
      if (refused.length === 0) return next(args);
      const sent = await next({
        ...args,
        input: {
          ...input,
          Entries: input.Entries.filter((entry) => !refused.includes(entry)),
        } as typeof args.input,
      });
      const Failed = refused.map((entry) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false }));
      return { ...sent, output: { ...sent.output, Failed } as typeof sent.output };
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await act(), batches };
  } finally {
    sqs.middlewareStack.remove(name);
  }
}

const idsOf = (batches: SentEntry[][]) => batches.map((batch) => batch.map((entry) => entry.Id));

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
    const messageOf = (event: EventRecord) => ({
      merchant_id: merchant.merchant_id,
      event_id: event.event_id,
      delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      endpoint_id: endpoint.endpoint_id,
    });
    return { events, messageOf };
  };
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i));

  it("queues a batch's first attempts at its end, in order, ten to a SendMessageBatch, each naming its endpoint", async () => {
    const { events, messageOf } = await twelveEvents();
    const { result, batches } = await withSqsBatches(() => handler(streamOf(events)));
    expect(result.batchItemFailures).toEqual([]);
    expect(batches.flat().map((entry) => JSON.parse(entry.MessageBody))).toEqual(events.map(messageOf));
    expect(idsOf(batches)).toEqual([range(0, 10), range(10, 12)]);
    for (const event of events) expect(await getDelivery(messageOf(event)), event.event_id).toBeDefined();
  });

  it('sends what SQS refused once more, and reports nothing when that is taken', async () => {
    const { events } = await twelveEvents();
    const { result, batches } = await withSqsBatches(
      () => handler(streamOf(events)),
      (id, call) => id === '3' && call === 1,
    );
    expect(result.batchItemFailures).toEqual([]);
    expect(idsOf(batches)).toEqual([range(0, 10), ['3'], range(10, 12)]);
  });

  it('reports the record of the first message SQS refused twice, and sends none after it', async () => {
    const { events } = await twelveEvents();
    const { result, batches } = await withSqsBatches(
      () => handler(streamOf(events)),
      (id) => id === '3',
    );
    // Message 3 is the fourth record's (sequence numbers start at 1); messages 10 and 11 were not sent.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '4' }]);
    expect(idsOf(batches)).toEqual([range(0, 10), ['3']]);
  });

  it('reports the first record of a SendMessageBatch that failed twice; fanned out again, it is queued', async () => {
    const { events, messageOf } = await twelveEvents();
    const { result, batches } = await withSqsBatches(
      () => handler(streamOf(events)),
      (id) => Number(id) >= 10,
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '11' }]);
    expect(idsOf(batches)).toEqual([range(0, 10), range(10, 12), range(10, 12)]);
    // From that record again: its deliveries exist with nothing tried, so they are queued again.
    const again = await withSqsBatches(() => handler(streamOf(events.slice(10))));
    expect(again.result.batchItemFailures).toEqual([]);
    expect(again.batches.flat().map((entry) => JSON.parse(entry.MessageBody))).toEqual(
      events.slice(10).map(messageOf),
    );
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

describe('an event type an endpoint did not subscribe to', () => {
  it('is not sent to it; endpoints subscribed to it, or to every type, get it (API.md §8 `events`)', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const [others, subscribed, every] = await Promise.all([
      createEndpoint(m, { url: receiver.url, events: ['transfer.failed', 'transfer.success'] }),
      createEndpoint(m, { url: receiver.url, events: ['transfer.failed', 'payment.received'] }),
      createEndpoint(m, { url: receiver.url }),
    ]);
    // Made after the endpoints: only endpoints registered by an event's time get it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const event = newEvent(
      m,
      'payment.received',
      { transaction: { reference: 'r' } },
      new Date().toISOString(),
    );

    expect((await handler(streamOf([event]))).batchItemFailures).toEqual([]);
    const deliveryTo = ({ endpoint }: { endpoint: { endpoint_id: string } }) =>
      getDelivery({
        merchant_id: m,
        event_id: event.event_id,
        delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      });
    expect(await deliveryTo(others)).toBeUndefined();
    expect(await deliveryTo(subscribed)).toMatchObject({ endpoint_id: subscribed.endpoint.endpoint_id });
    expect(await deliveryTo(every)).toMatchObject({ endpoint_id: every.endpoint.endpoint_id });
  });
});
