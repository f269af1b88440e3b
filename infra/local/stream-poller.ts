import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { localCredentials } from '#infra/local/process.ts';
import {
  givenUpQueueName,
  STREAM_GIVE_UP_AGE_SECONDS,
  type StreamDefinition,
} from '#shared/definitions/streams.ts';

/** Errors of a shard iterator that a fresh one cures (from the last record passed, or the oldest). */
const RESTARTABLE = new Set(['TrimmedDataAccessException', 'ExpiredIteratorException']);

/** A shard iterator expires 15 minutes after it was issued: one older than this is asked for again. */
const ITERATOR_REFRESH_MS = 5 * 60_000;

/** How long Lambda tries a failing record again before it gives its batch up (`STREAM_GIVE_UP_AGE_SECONDS`). */
export const GIVE_UP_AGE_MS = STREAM_GIVE_UP_AGE_SECONDS * 1000;

/**
 * Lambda's on-failure record for a DynamoDB stream batch it gave up on: where the batch was and
 * when its records arrived, never the records themselves.
 */
export interface StreamBatchGivenUp {
  requestContext: {
    requestId: string;
    functionArn: string;
    condition: 'RecordAgeExceeded';
    approximateInvokeCount: number;
  };
  responseContext: { statusCode: number; executedVersion: string; functionError: string };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
}

type StreamAttribute = NonNullable<NonNullable<_Record['dynamodb']>['NewImage']>[string];

/**
 * An attribute as DynamoDB's stream gives it. DynamoDB Local's stream writes an empty map as `{}`,
 * with no type, where DynamoDB's (and DynamoDB Local's own `GetItem`) write `{"M":{}}`; nothing
 * else is ever typeless, so a typeless value is that map.
 */
function repaired(value: StreamAttribute): StreamAttribute {
  if (value.M) return { M: repairedImage(value.M) };
  if (value.L) return { L: value.L.map(repaired) };
  return Object.keys(value).length === 0 ? { M: {} } : value;
}

function repairedImage(image: Record<string, StreamAttribute>): Record<string, StreamAttribute> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, repaired(value)]));
}

/** A record of DynamoDB Local's stream as Lambda's mapping hands it to a function on AWS. */
function asLambdaGives(record: _Record, streamArn: string): DynamoDBRecord {
  const change = record.dynamodb;
  const images = change && {
    ...change,
    ...(change.Keys && { Keys: repairedImage(change.Keys) }),
    ...(change.NewImage && { NewImage: repairedImage(change.NewImage) }),
    ...(change.OldImage && { OldImage: repairedImage(change.OldImage) }),
  };
  return { ...record, ...(images && { dynamodb: images }), eventSourceARN: streamArn } as DynamoDBRecord;
}

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  batchSize: number;
  /** Pause between reads of a shard with nothing new. */
  idleMs?: number;
  onError?: (error: unknown) => void;
  /** The consumer's name, in the `functionArn` of what is given up. */
  consumer?: string;
  /** The poller's clock: records' ages and its iterators' are read against it (tests move it). */
  now?: () => number;
  /**
   * Told of each batch given up, in Lambda's on-failure shape (the stream's given-up queue). Until
   * it resolves the batch is not passed, so a description that could not be sent is not lost.
   */
  onGiveUp?: (description: StreamBatchGivenUp) => Promise<void>;
  /**
   * Where the shards' checkpoints are kept between runs (`npm start`'s data folder): a restart goes
   * on after the last record handled, as Lambda's mapping keeps its place, instead of handling all
   * the stream still holds (a day of it) before anything new. Without it, or for another stream
   * (a new table), every shard is read from its oldest record.
   */
  checkpointFile?: string;
}

/** The checkpoints of `streamArn` kept in `file`, if it holds that stream's (an unreadable file: none). */
function keptCheckpoints(file: string | undefined, streamArn: string): Map<string, string> {
  if (!file) return new Map();
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { streamArn?: unknown; shards?: unknown };
    const shards = kept.shards;
    if (kept.streamArn !== streamArn || typeof shards !== 'object' || shards === null) return new Map();
    return new Map(
      Object.entries(shards).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return new Map();
  }
}

/** Keeps the checkpoints whole: written beside the file, then moved over it (a crash leaves the old). */
function keepCheckpoints(file: string, streamArn: string, checkpoints: ReadonlyMap<string, string>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const next = `${file}.next`;
  writeFileSync(next, JSON.stringify({ streamArn, shards: Object.fromEntries(checkpoints) }));
  renameSync(next, file);
}

/** What Lambda sends its on-failure destination for `records`, a batch it gave up on at `now`. */
function describeGivenUpBatch(
  records: readonly _Record[],
  where: { shardId: string; streamArn: string; consumer: string },
  invokeCount: number,
  now: number,
): StreamBatchGivenUp {
  const { shardId, streamArn, consumer } = where;
  const wholeSeconds = (at: Date | undefined) =>
    new Date(at?.getTime() ?? now).toISOString().replace(/\.\d+Z$/, 'Z');
  const first = records[0]?.dynamodb;
  const last = records.at(-1)?.dynamodb;
  return {
    requestContext: {
      requestId: randomUUID(),
      functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${consumer}`,
      condition: 'RecordAgeExceeded',
      approximateInvokeCount: invokeCount,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: new Date(now).toISOString(),
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: first?.SequenceNumber ?? '',
      endSequenceNumber: last?.SequenceNumber ?? '',
      approximateArrivalOfFirstRecord: wholeSeconds(first?.ApproximateCreationDateTime),
      approximateArrivalOfLastRecord: wholeSeconds(last?.ApproximateCreationDateTime),
      batchSize: records.length,
      streamArn,
    },
  };
}

/**
 * Sends what a stream poller gives up to the stream's given-up queue (made by the bootstrap), as
 * the CDK stack's `onFailure` destination receives it from Lambda. Its own client and lookup, not
 * `queueUrlOf` (shared/aws/dead-letters.ts): that module's client reads the configuration when it
 * is imported, before the local runtime has set it.
 */
export function givenUpSender(env: Record<string, string>) {
  const client = new SQSClient({
    endpoint: env.SQS_ENDPOINT,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  return {
    send: async (stream: StreamDefinition, description: StreamBatchGivenUp) => {
      const name = (env.TABLE_PREFIX ?? '') + givenUpQueueName(stream);
      const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
      if (!QueueUrl) throw new Error(`no queue ${name}: the local bootstrap makes it`);
      await client.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(description) }));
    },
    stop: async () => client.destroy(),
  };
}

/**
 * Where a batch must be given again from, as Lambda reads a consumer's answer: -1 when it reports
 * no failure; the earliest record it reports; the whole batch (0) when a reported id is none of the
 * batch's records (empty, or unknown).
 */
export function firstFailedIndex(
  batch: readonly _Record[],
  answer: DynamoDBBatchResponse | undefined,
): number {
  const reported = (answer?.batchItemFailures ?? []).map(({ itemIdentifier }) =>
    batch.findIndex((record) => itemIdentifier && record.dynamodb?.SequenceNumber === itemIdentifier),
  );
  if (reported.length === 0) return -1;
  return reported.includes(-1) ? 0 : Math.min(...reported);
}

/**
 * Drives a table-stream consumer as Lambda's DynamoDB event source mapping does: reads every shard
 * of the table's stream after its checkpoint, kept in `checkpointFile` across restarts, or from its
 * oldest record (so records written while nothing ran are still handled after a restart), invokes
 * the handler with real stream records, and on a reported failure gives the same records again from the first failed one, as Lambda does, until the first
 * of them is 23 hours old (`GIVE_UP_AGE_MS`): then those records are given up, described to `onGiveUp`
 * as Lambda describes them to the mapping's on-failure destination, and the shard read on.
 */
export async function startStreamPoller(options: StreamPollerOptions): Promise<{ stop(): Promise<void> }> {
  const client = { region: 'us-east-1', endpoint: options.endpoint, credentials: localCredentials };
  const dynamo = new DynamoDBClient(client);
  const streams = new DynamoDBStreamsClient(client);
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
  dynamo.destroy();
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${options.tableName} has no stream`);
  let running = true;
  const idle = () => new Promise((resolve) => setTimeout(resolve, options.idleMs ?? 200));
  const reading = new Set<string>();
  const done = new Set<string>();
  /**
   * Per shard, the sequence number of the last record handled or given up: a shard read again (an
   * iterator expired while a failing record was given again, for up to a day) goes on after it, as
   * Lambda's mapping does, instead of handling the shard's every record again.
   */
  const checkpoints = keptCheckpoints(options.checkpointFile, streamArn);
  /** A checkpoint moved (after its records were handled: a crash before this gives them again). */
  const checkpointed = () => {
    if (!options.checkpointFile) return;
    try {
      keepCheckpoints(options.checkpointFile, streamArn, checkpoints);
    } catch (error) {
      options.onError?.(error);
    }
  };
  const now = options.now ?? Date.now;
  /** Describes `records` to `onGiveUp`; false (the records kept) if it could not be told. */
  const gaveUp = async (records: readonly _Record[], shardId: string, invokes: number) => {
    const description = describeGivenUpBatch(
      records,
      { shardId, streamArn, consumer: options.consumer ?? options.tableName },
      invokes,
      now(),
    );
    try {
      await options.onGiveUp?.(description);
      return true;
    } catch (error) {
      options.onError?.(error);
      return false;
    }
  };

  const readShard = async (shardId: string) => {
    const freshIterator = async () => {
      const after = checkpoints.get(shardId);
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ...(after
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      iteratorAt = now();
      return ShardIterator;
    };
    let iteratorAt = 0; // set by every fresh iterator and every read
    let iterator = await freshIterator();
    let pending: _Record[] = [];
    /** Invocations with the records from `pending[0]` on (Lambda's `approximateInvokeCount`). */
    let invokes = 0;
    /** The records of `handled` are behind the shard's reading for good. */
    const passed = (handled: readonly _Record[]) => {
      const last = handled.at(-1)?.dynamodb?.SequenceNumber;
      if (!last) return;
      checkpoints.set(shardId, last);
      checkpointed();
    };
    while (running && (iterator || pending.length > 0)) {
      if (pending.length === 0 && iterator) {
        if (now() - iteratorAt > ITERATOR_REFRESH_MS) iterator = await freshIterator();
        const page = await streams.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: options.batchSize }),
        );
        pending = page.Records ?? [];
        iterator = page.NextShardIterator;
        iteratorAt = now();
        if (pending.length === 0) {
          await idle();
          continue;
        }
      }
      const batch = pending.slice(0, options.batchSize);
      const event: DynamoDBStreamEvent = {
        Records: batch.map((record) => asLambdaGives(record, streamArn)),
      };
      let failedAt = -1;
      invokes++;
      try {
        failedAt = firstFailedIndex(batch, await options.handler(event));
      } catch (error) {
        options.onError?.(error);
        failedAt = 0;
      }
      if (failedAt < 0) {
        passed(batch);
        pending = pending.slice(batch.length);
        invokes = 0;
      } else {
        passed(batch.slice(0, failedAt));
        if (failedAt > 0) invokes = 1;
        pending = pending.slice(failedAt);
        const failing = batch.slice(failedAt);
        // DynamoDB Local states a record's creation to the minute (DynamoDB to the second).
        const arrived = failing[0]?.dynamodb?.ApproximateCreationDateTime?.getTime() ?? now();
        if (now() - arrived >= GIVE_UP_AGE_MS && (await gaveUp(failing, shardId, invokes))) {
          passed(failing);
          pending = pending.slice(failing.length);
          invokes = 0;
        } else await idle();
      }
    }
    reading.delete(shardId);
  };

  const loop = (async () => {
    while (running) {
      try {
        const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
        for (const shard of StreamDescription?.Shards ?? []) {
          const id = shard.ShardId;
          if (!id || reading.has(id) || done.has(id)) continue;
          reading.add(id);
          void readShard(id)
            .then(() => done.add(id))
            .catch((error: unknown) => {
              reading.delete(id);
              // An iterator expired, or past its shard's trim horizon (DynamoDB Local trims and
              // rotates shards): the next round reads the shard again after its last record passed,
              // or, that one trimmed, from its oldest record, as Lambda's mapping does; the
              // consumer is idempotent. Not an error worth a log line.
              if ((error as Error)?.name === 'TrimmedDataAccessException' && checkpoints.delete(id))
                checkpointed();
              if (running && !RESTARTABLE.has((error as Error)?.name)) options.onError?.(error);
            });
        }
      } catch (error) {
        if (running) options.onError?.(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();

  return {
    stop: async () => {
      running = false;
      await loop;
      while (reading.size > 0) await idle();
      streams.destroy();
    },
  };
}
