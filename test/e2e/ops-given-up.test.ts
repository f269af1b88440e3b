import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queueUrlOf } from '#shared/aws/dead-letters.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { EVENTS_STREAM, givenUpQueueName } from '#shared/definitions/streams.ts';
import { type EventRecord, newEvent } from '#shared/events/events.ts';
import { deliveryItemKey, firstDeliveryId, getDelivery } from '#shared/merchant-webhooks/deliveries.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import type { GivenUpBatch, Replayed } from '#shared/merchant-webhooks/given-up.ts';
import { runCli } from '#test/support/cli.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * `npm run ops -- given-up …` and `events fan-out`: the way back from merchant webhooks the events
 * stream never fanned out. The runtime's stream poller fans every event out at once, so a batch
 * the stream gave up is made the way it looks a day later: the events are stored, their deliveries
 * are not (deleted here), and Lambda's description of the batch waits in the given-up queue.
 */

// As an operator's shell: no deliveries queue URL configured, the CLI finds it by name.
const ops = (...args: string[]) => runCli('ops', args, { WEBHOOK_DELIVERIES_QUEUE_URL: undefined });

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const HOUR = 3_600_000;
/** Well away from the events every other test makes now, so the windows here hold only these. */
const BASE = Date.now() - 72 * HOUR;
const iso = (time: number) => new Date(time).toISOString();
const postsOf = (event: EventRecord) =>
  receiver.received.filter((request) => request.headers['webhook-id'] === event.event_id).length;

/** Lambda's on-failure record for a DynamoDB stream batch (`DDBStreamBatchInfo`). */
function lambdaDescription(first: number, last: number) {
  return JSON.stringify({
    requestContext: {
      requestId: '316aa6d0-8154-4a0b-9af7-85d5f4a6bc81',
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:naira-prod-fan-out-events',
      condition: 'RecordAgeExceeded',
      approximateInvokeCount: 1440,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: iso(last + 24 * HOUR),
    DDBStreamBatchInfo: {
      shardId: 'shardId-00000001700000000000-abcdef12',
      startSequenceNumber: '800000000003126276362',
      endSequenceNumber: '800000000003126276370',
      approximateArrivalOfFirstRecord: iso(first).replace(/\.\d+Z$/, 'Z'),
      approximateArrivalOfLastRecord: iso(last).replace(/\.\d+Z$/, 'Z'),
      batchSize: 3,
      streamArn:
        'arn:aws:dynamodb:eu-west-1:123456789012:table/naira-prod-events/stream/2026-01-01T00:00:00.000',
    },
  });
}

describe('npm run ops -- given-up / events fan-out', { timeout: 120_000 }, () => {
  /**
   * A merchant's endpoint registered before `times`, one event at each time, fanned out and
   * delivered by the running stack; then every one of their deliveries deleted, as if never made.
   */
  async function eventsWhoseFanOutWasLost(times: readonly number[]) {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const { endpoint } = await createEndpoint(m, { url: receiver.url, events: ['payment.received'] });
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('webhookEndpoints'),
        Key: { merchant_id: m, endpoint_id: endpoint.endpoint_id },
        UpdateExpression: 'SET created_at = :at',
        ExpressionAttributeValues: { ':at': iso(Math.min(...times) - HOUR) },
      }),
    );
    const events = times.map((time) =>
      newEvent(m, 'payment.received', { transaction: { reference: `r-${time}` } }, iso(time)),
    );
    for (const event of events)
      await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
    const deliveryOf = (event: EventRecord) =>
      getDelivery({
        merchant_id: m,
        event_id: event.event_id,
        delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
      });
    for (const event of events) {
      await expect.poll(async () => (await deliveryOf(event))?.status, { timeout: 30_000 }).toBe('delivered');
      expect(postsOf(event)).toBe(1);
      await dynamo.send(
        new DeleteCommand(
          deliveryItemKey({
            merchant_id: m,
            event_id: event.event_id,
            delivery_id: firstDeliveryId(event.event_id, endpoint.endpoint_id),
          }),
        ),
      );
    }
    return { events, deliveryOf };
  }

  it('lists what the stream gave up, replays one batch (its window fanned out again, its message deleted), and keeps what it cannot read', async () => {
    const t = BASE;
    // One event in the margin only (4 minutes before the first record arrived), two in the batch,
    // and one 40 minutes later, outside the window.
    const { events, deliveryOf } = await eventsWhoseFanOutWasLost([
      t - 4 * 60_000,
      t,
      t + 1_500,
      t + 40 * 60_000,
    ]);
    const [early, first, second, outside] = events as [EventRecord, EventRecord, EventRecord, EventRecord];
    const queue = await queueUrlOf(givenUpQueueName(EVENTS_STREAM));
    const good = await sqs.send(
      new SendMessageCommand({ QueueUrl: queue, MessageBody: lambdaDescription(t, t + 1_500) }),
    );
    const garbled = await sqs.send(
      new SendMessageCommand({ QueueUrl: queue, MessageBody: 'not from Lambda' }),
    );

    const listed = await ops('given-up', 'list', '--json');
    expect(listed.code).toBe(0);
    const batches = JSON.parse(listed.stdout) as GivenUpBatch[];
    expect(batches.find((batch) => batch.messageId === good.MessageId)).toMatchObject({
      condition: 'RecordAgeExceeded',
      shardId: 'shardId-00000001700000000000-abcdef12',
      firstSequence: '800000000003126276362',
      lastSequence: '800000000003126276370',
      batchSize: 3,
      // The arrival times, whole seconds, widened by 5 minutes each way.
      window: {
        from: iso(Math.floor(t / 1000) * 1000 - 5 * 60_000),
        to: iso(Math.floor((t + 1_500) / 1000) * 1000 + 5 * 60_000),
      },
    });
    expect(batches.find((batch) => batch.messageId === garbled.MessageId)?.window).toBeNull();
    // Listing took nothing away.
    expect((await ops('given-up', 'list')).stdout).toContain(good.MessageId);

    // The deliveries queue unreachable: the fan-out fails, the message stays, the command exits 1.
    const broken = await runCli('ops', ['given-up', 'replay', '--message', good.MessageId ?? ''], {
      WEBHOOK_DELIVERIES_QUEUE_URL: `${process.env.SQS_ENDPOINT}/000000000000/no-such-queue`,
    });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('NOT replayed, left in the queue');
    expect(broken.stderr).toContain('1 batch(es) not replayed');
    const held = JSON.parse((await ops('given-up', 'list', '--json')).stdout) as GivenUpBatch[];
    expect(held.map((batch) => batch.messageId)).toContain(good.MessageId);
    expect(postsOf(first)).toBe(1);

    const replay = await ops('given-up', 'replay', '--message', good.MessageId ?? '', '--json');
    expect(replay.code, replay.stderr).toBe(0);
    const [replayed] = JSON.parse(replay.stdout) as Replayed[];
    expect(replayed).toMatchObject({ messageId: good.MessageId, deleted: true, error: null });
    // The failed run recorded the deliveries but queued none: never tried, they are queued now.
    expect(replayed?.fannedOut).toMatchObject({ events: 3, queued: 3, skipped: [] });
    // The three events of the window reach the endpoint again, under the same webhook-id; the
    // fourth, 40 minutes later, is not in the window and is left alone.
    for (const event of [early, first, second]) {
      await expect.poll(async () => (await deliveryOf(event))?.status, { timeout: 30_000 }).toBe('delivered');
      expect(postsOf(event)).toBe(2);
    }
    expect(await deliveryOf(outside)).toBeUndefined();
    expect(postsOf(outside)).toBe(1);

    // Replayed twice, nothing is sent twice: the deliveries exist and were tried.
    const again = await ops(
      'events',
      'fan-out',
      '--from',
      iso(t - 60_000),
      '--to',
      iso(t + 60_000),
      '--json',
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ events: 2, queued: 0 });

    // The replayed message is gone; the unreadable one stays, and a replay of all fails on it.
    const left = JSON.parse((await ops('given-up', 'list', '--json')).stdout) as GivenUpBatch[];
    expect(left.map((batch) => batch.messageId)).not.toContain(good.MessageId);
    expect(left.map((batch) => batch.messageId)).toContain(garbled.MessageId);
    const all = await ops('given-up', 'replay');
    expect(all.code).toBe(1);
    expect(all.stdout).toContain(`${garbled.MessageId}`);
    expect(all.stdout).toContain('NOT replayed, left in the queue: not a description of a stream batch');
    expect(all.stderr).toContain('1 batch(es) not replayed');
    const still = JSON.parse((await ops('given-up', 'list', '--json')).stdout) as GivenUpBatch[];
    expect(still.map((batch) => batch.messageId)).toContain(garbled.MessageId);

    // A window by hand (after `EventsNotFannedOutAlarm`, once its cause is fixed): the third event.
    const byHand = await ops(
      'events',
      'fan-out',
      '--from',
      iso(t + 39 * 60_000),
      '--to',
      iso(t + 41 * 60_000),
    );
    expect(byHand.code, byHand.stderr).toBe(0);
    expect(byHand.stdout).toContain('Fanned out again 1 event(s)');
    expect(byHand.stdout).toContain('1 delivery(ies) queued');
    await expect.poll(async () => (await deliveryOf(outside))?.status, { timeout: 30_000 }).toBe('delivered');
    expect(postsOf(outside)).toBe(2);
  });

  it('passes over an event that can never be fanned out, names it and exits 1, and fans out the others', async () => {
    const t = BASE + 10 * HOUR;
    const { events, deliveryOf } = await eventsWhoseFanOutWasLost([t]);
    const [fine] = events as [EventRecord];
    // Another merchant's endpoint stored without its event types: reading it fails however often.
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    await dynamo.send(
      new PutCommand({
        TableName: tableName('webhookEndpoints'),
        Item: {
          merchant_id: m,
          endpoint_id: 'we_malformed',
          url: receiver.url,
          status: 'enabled',
          secrets: [],
          created_at: iso(t - HOUR),
        },
      }),
    );
    const malformed = newEvent(m, 'payment.received', { transaction: { reference: 'r' } }, iso(t + 1_000));
    await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: malformed }));

    const run = await ops('events', 'fan-out', '--from', iso(t - 60_000), '--to', iso(t + 60_000), '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      events: 2,
      queued: 1,
      skipped: [
        { merchant_id: m, event_id: malformed.event_id, error: expect.stringContaining('TypeError') },
      ],
    });
    expect(run.stderr).toContain('1 event(s) skipped');
    await expect.poll(async () => (await deliveryOf(fine))?.status, { timeout: 30_000 }).toBe('delivered');
    expect(postsOf(fine)).toBe(2);
    expect(postsOf(malformed)).toBe(0);
  });

  it('refuses a fan-out without a window, or with one it cannot read, and an unknown message, with exit code 2', async () => {
    for (const line of [
      ['events', 'fan-out'],
      ['events', 'fan-out', '--from', '2026-11-24T10:00:00Z'],
      ['events', 'fan-out', '--from', 'yesterday', '--to', '2026-11-24T10:00:00Z'],
      ['events', 'fan-out', '--from', '2026-11-24T11:00:00Z', '--to', '2026-11-24T10:00:00Z'],
      // Without its offset a time would be read in this machine's time zone.
      ['events', 'fan-out', '--from', '2026-11-24T10:00:00', '--to', '2026-11-24T11:00:00Z'],
      ['given-up', 'replay', '--message', 'no-such-message'],
      ['given-up', 'forget'],
    ]) {
      const refused = await ops(...line);
      expect(refused.code, line.join(' ')).toBe(2);
      expect(refused.stderr, line.join(' ')).toContain('Usage:');
    }
  });
});
