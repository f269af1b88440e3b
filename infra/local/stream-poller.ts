import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { localCredentials } from '#infra/local/process.ts';

/** Errors of a shard iterator that a fresh read from TRIM_HORIZON cures. */
const RESTARTABLE = new Set(['TrimmedDataAccessException', 'ExpiredIteratorException']);

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  batchSize: number;
  /** Pause between reads of a shard with nothing new. */
  idleMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Drives a table-stream consumer as Lambda's DynamoDB event source mapping does: reads every shard
 * of the table's stream from its oldest record (so records written while nothing ran are still
 * handled after a restart), invokes the handler with real stream records, and on a reported
 * failure gives the same records again from the first failed one, as Lambda does.
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

  const readShard = async (shardId: string) => {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    let pending: _Record[] = [];
    while (running && (iterator || pending.length > 0)) {
      if (pending.length === 0 && iterator) {
        const page = await streams.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: options.batchSize }),
        );
        pending = page.Records ?? [];
        iterator = page.NextShardIterator;
        if (pending.length === 0) {
          await idle();
          continue;
        }
      }
      const batch = pending.slice(0, options.batchSize);
      const event: DynamoDBStreamEvent = {
        Records: batch.map((record) => ({ ...record, eventSourceARN: streamArn }) as DynamoDBRecord),
      };
      let failedAt = -1;
      try {
        const answer = await options.handler(event);
        const first = answer?.batchItemFailures?.[0]?.itemIdentifier;
        failedAt = first ? batch.findIndex((record) => record.dynamodb?.SequenceNumber === first) : -1;
      } catch (error) {
        options.onError?.(error);
        failedAt = 0;
      }
      if (failedAt < 0) pending = pending.slice(batch.length);
      else {
        pending = pending.slice(failedAt);
        await idle();
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
              // An iterator past its shard's trim horizon, or expired (DynamoDB Local trims and
              // rotates shards): the next round reads the shard again from its oldest record, as
              // Lambda's mapping does; the consumer is idempotent. Not an error worth a log line.
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
