import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  type StreamViewType,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localCredentials } from '#infra/local/process.ts';
import {
  GIVE_UP_AGE_MS,
  givenUpSender,
  type StreamBatchGivenUp,
  type StreamHandler,
  startStreamPoller,
} from '#infra/local/stream-poller.ts';
import { EVENTS_STREAM, givenUpQueueName } from '#shared/definitions/streams.ts';
import { describeGivenUp } from '#shared/merchant-webhooks/given-up.ts';

/**
 * The local stream poller gives a failing batch up as Lambda's mapping does when its records age
 * out: the records from the first failure on are described (never given) to the stream's given-up
 * queue, in the shape the operator's `npm run ops -- given-up` reads, and the shard is read on.
 */

const env = {
  SQS_ENDPOINT: process.env.SQS_ENDPOINT ?? '',
  TABLE_PREFIX: `${process.env.TABLE_PREFIX ?? ''}poller-${randomUUID().slice(0, 8)}-`,
};
const local = { region: 'us-east-1', credentials: localCredentials };
const dynamo = new DynamoDBClient({ ...local, endpoint: process.env.DYNAMODB_ENDPOINT });
const sqs = new SQSClient({ ...local, endpoint: env.SQS_ENDPOINT });
const table = `${env.TABLE_PREFIX}items`;
/** The second test's own table: a stream read from its start holds only that test's records. */
const otherTable = `${env.TABLE_PREFIX}others`;
// A stream of its own, so its given-up queue holds only what this test gives up.
const stream = { ...EVENTS_STREAM, consumer: 'test-consumer' };
let queueUrl = '';

const createTable = async (name: string, images: StreamViewType = 'NEW_IMAGE') => {
  await dynamo.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: images },
    }),
  );
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 30 }, { TableName: name });
};

beforeAll(async () => {
  for (const name of [table, otherTable]) await createTable(name);
  queueUrl =
    (await sqs.send(new CreateQueueCommand({ QueueName: env.TABLE_PREFIX + givenUpQueueName(stream) })))
      .QueueUrl ?? '';
});

afterAll(async () => {
  for (const name of [table, otherTable])
    await dynamo.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
  await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => undefined);
  dynamo.destroy();
  sqs.destroy();
});

const put = (id: string, into = table) =>
  dynamo.send(new PutItemCommand({ TableName: into, Item: { id: { S: id } } }));
/** A poller of one table, 10 records a batch, reading again 50 ms after finding nothing new. */
const pollerFor = (tableName: string, handler: StreamHandler) =>
  startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT ?? '',
    tableName,
    batchSize: 10,
    idleMs: 50,
    handler,
    onError: () => undefined,
  });
const idOf = (record: DynamoDBStreamEvent['Records'][number]) => record.dynamodb?.NewImage?.id?.S;

describe('the local stream poller', { timeout: 60_000 }, () => {
  it('gives the failing records of a batch up once they are older than the record age, describes them to the given-up queue, and reads on', async () => {
    const seen: string[][] = [];
    let failing = 'b';
    const sender = givenUpSender(env);
    const givenUp: StreamBatchGivenUp[] = [];
    let sendFails = true;
    let clockOffset = 0;
    // All three in the stream before the poller reads it: one batch of a, b and c.
    const started = Date.now();
    await put('a');
    await put('b');
    await put('c');
    const poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT ?? '',
      tableName: table,
      batchSize: 10,
      idleMs: 50,
      now: () => Date.now() + clockOffset,
      consumer: stream.consumer,
      handler: async (event) => {
        seen.push(event.Records.map((record) => idOf(record) ?? '?'));
        const bad = event.Records.find((record) => idOf(record) === failing);
        return { batchItemFailures: bad ? [{ itemIdentifier: bad.dynamodb?.SequenceNumber ?? '' }] : [] };
      },
      onGiveUp: async (description) => {
        // The first description cannot be sent: the records are kept and given again.
        if (sendFails) {
          sendFails = false;
          throw new Error('queue unreachable');
        }
        givenUp.push(description);
        await sender.send(stream, description);
      },
      onError: () => undefined,
    });
    try {
      // b fails and is given again and again while it is younger than a day; a is not.
      await expect
        .poll(() => seen.filter((batch) => batch[0] === 'b').length, { timeout: 20_000 })
        .toBeGreaterThan(3);
      expect(givenUp).toHaveLength(0);
      expect(seen[0]).toEqual(['a', 'b', 'c']);
      expect(seen.flat().filter((id) => id === 'a')).toEqual(['a']);
      // A day later (the stream's retention), b and c are given up.
      clockOffset = GIVE_UP_AGE_MS + 60_000;
      await expect.poll(() => givenUp.length, { timeout: 20_000, interval: 100 }).toBe(1);

      // The shard is read on after them (its iterator, a day old by the clock, asked for again after
      // the last record given up): a later record reaches the handler, and a, b and c never again.
      const afterGivingUp = seen.length;
      failing = '';
      await put('d');
      await expect
        .poll(() => seen.slice(afterGivingUp).flat(), { timeout: 20_000, interval: 100 })
        .toContain('d');
      expect(seen.slice(afterGivingUp).flat()).toEqual(['d']);
      expect(givenUp).toHaveLength(1);

      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      expect(Messages).toHaveLength(1);
      const [message] = Messages;
      const body = JSON.parse(message?.Body ?? '{}') as StreamBatchGivenUp;
      expect(body).toEqual(givenUp[0]);
      // b and c, the records from the first failure to the end of their batch.
      expect(body.DDBStreamBatchInfo.batchSize).toBe(2);
      expect(body.requestContext.condition).toBe('RecordAgeExceeded');
      expect(body.requestContext.approximateInvokeCount).toBeGreaterThan(2);
      expect(BigInt(body.DDBStreamBatchInfo.endSequenceNumber)).toBeGreaterThan(
        BigInt(body.DDBStreamBatchInfo.startSequenceNumber),
      );
      expect(body.DDBStreamBatchInfo.streamArn).toContain(table);

      // The operator's reading of it: a window around when b and c were written.
      const batch = describeGivenUp({ MessageId: message?.MessageId, Body: message?.Body });
      expect(batch).toMatchObject({ condition: 'RecordAgeExceeded', batchSize: 2 });
      const from = Date.parse(batch.window?.from ?? '');
      const to = Date.parse(batch.window?.to ?? '');
      expect(from).toBeLessThanOrEqual(started);
      expect(to).toBeGreaterThanOrEqual(started);
    } finally {
      await poller.stop();
      await sender.stop();
    }
  });

  it('gives an empty map as DynamoDB does ({"M":{}}), though DynamoDB Local\'s stream writes it as {}', async () => {
    const mapsTable = `${env.TABLE_PREFIX}maps`;
    await createTable(mapsTable, 'NEW_AND_OLD_IMAGES');
    const item = { id: 'm', empty: {}, nested: { inner: {}, kept: 'k' }, list: [{}, []] };
    await dynamo.send(new PutItemCommand({ TableName: mapsTable, Item: marshall(item) }));
    await dynamo.send(new PutItemCommand({ TableName: mapsTable, Item: marshall({ ...item, kept: 1 }) }));
    const seen: DynamoDBStreamEvent['Records'] = [];
    const poller = await pollerFor(mapsTable, async (event) => {
      seen.push(...event.Records);
      return { batchItemFailures: [] };
    });
    try {
      await expect.poll(() => seen.length, { timeout: 20_000, interval: 100 }).toBe(2);
      const image = (value: unknown) => unmarshall(value as Record<string, AttributeValue>);
      expect(image(seen[0]?.dynamodb?.NewImage)).toEqual(item);
      expect(image(seen[1]?.dynamodb?.OldImage)).toEqual(item);
      expect(image(seen[1]?.dynamodb?.NewImage)).toEqual({ ...item, kept: 1 });
      expect(seen[0]?.dynamodb?.NewImage?.empty).toEqual({ M: {} });
    } finally {
      await poller.stop();
      await dynamo.send(new DeleteTableCommand({ TableName: mapsTable })).catch(() => undefined);
    }
  });

  it("gives the whole batch again when a reported failure is none of the batch's records, as Lambda does", async () => {
    await put('x', otherTable);
    await put('y', otherTable);
    const seen: string[][] = [];
    const answers = [
      { batchItemFailures: [{ itemIdentifier: '' }] },
      { batchItemFailures: [{ itemIdentifier: 'not-a-sequence-number' }] },
      { batchItemFailures: [] },
    ];
    const poller = await pollerFor(otherTable, async (event) => {
      seen.push(event.Records.map((record) => idOf(record) ?? '?'));
      return answers[seen.length - 1] ?? { batchItemFailures: [] };
    });
    try {
      await expect.poll(() => seen.length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(3);
      expect(seen.slice(0, 3)).toEqual([
        ['x', 'y'],
        ['x', 'y'],
        ['x', 'y'],
      ]);
    } finally {
      await poller.stop();
    }
  });

  it('gives a batch whose handler threw again, whole, as Lambda does: never passed over', async () => {
    const throwTable = `${env.TABLE_PREFIX}thrown`;
    await createTable(throwTable);
    try {
      await put('t1', throwTable);
      await put('t2', throwTable);
      const seen: string[][] = [];
      const poller = await pollerFor(throwTable, async (event) => {
        seen.push(event.Records.map((record) => idOf(record) ?? '?'));
        if (seen.length === 1) throw new Error('the fan-out threw');
        return { batchItemFailures: [] };
      });
      try {
        await expect.poll(() => seen.length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(2);
        expect(seen.slice(0, 2)).toEqual([
          ['t1', 't2'],
          ['t1', 't2'],
        ]);
      } finally {
        await poller.stop();
      }
    } finally {
      await dynamo.send(new DeleteTableCommand({ TableName: throwTable })).catch(() => undefined);
    }
  });

  it('keeps its place in its checkpoint file across restarts: the next poller reads on after the last record handled', async () => {
    const placeTable = `${env.TABLE_PREFIX}place`;
    await createTable(placeTable);
    const folder = mkdtempSync(path.join(tmpdir(), 'stream-checkpoints-'));
    const checkpointFile = path.join(folder, 'streams', 'consumer.json');
    const run = async (file: string, until: (seen: string[]) => boolean) => {
      const seen: string[] = [];
      const poller = await startStreamPoller({
        endpoint: process.env.DYNAMODB_ENDPOINT ?? '',
        tableName: placeTable,
        batchSize: 10,
        idleMs: 50,
        checkpointFile: file,
        handler: async (event) => {
          seen.push(...event.Records.map((record) => idOf(record) ?? '?'));
          return { batchItemFailures: [] };
        },
        onError: () => undefined,
      });
      try {
        await expect.poll(() => until(seen), { timeout: 20_000, interval: 100 }).toBe(true);
        // A moment more: anything read again would come now.
        await new Promise((resolve) => setTimeout(resolve, 500));
        return seen;
      } finally {
        await poller.stop();
      }
    };
    try {
      for (const id of ['p1', 'p2', 'p3']) await put(id, placeTable);
      expect(await run(checkpointFile, (seen) => seen.length >= 3)).toEqual(['p1', 'p2', 'p3']);
      // Restarted: only what came since, not the stream's every record again.
      await put('p4', placeTable);
      expect(await run(checkpointFile, (seen) => seen.includes('p4'))).toEqual(['p4']);
      // A file of another stream (a table made anew) is not this one's place: read from the oldest.
      const other = path.join(folder, 'other.json');
      writeFileSync(
        other,
        JSON.stringify({
          streamArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/gone/stream/x',
          shards: {},
        }),
      );
      expect(await run(other, (seen) => seen.length >= 4)).toEqual(['p1', 'p2', 'p3', 'p4']);
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await dynamo.send(new DeleteTableCommand({ TableName: placeTable })).catch(() => undefined);
    }
  });
});
