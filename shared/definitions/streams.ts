/**
 * Table streams and the functions they drive (Lambda event source mappings on AWS, the local
 * runtime's stream poller locally), read by the CDK stack and the local runtime alike.
 */
import type { Access } from '#shared/definitions/routes.ts';
import type { TableName } from '#shared/definitions/tables.ts';

export interface StreamDefinition {
  readonly table: TableName;
  readonly consumer: string;
  readonly consumerAccess: Access;
  readonly consumerTimeoutSeconds: number;
  readonly batchSize: number;
  /**
   * Batches of one shard a consumer works on at once on AWS (Lambda's ParallelizationFactor, 1-10),
   * records of one partition key still in order. The local stream poller works on one at a time.
   */
  readonly parallelizationFactor: number;
}

export const STREAMS: readonly StreamDefinition[] = [
  {
    // Every new event is fanned out to the merchant's endpoints as deliveries.
    table: 'events',
    consumer: 'fan-out-events',
    consumerAccess: {
      read: ['webhookEndpoints'],
      write: ['webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
    },
    consumerTimeoutSeconds: 30,
    batchSize: 25,
    // One batch at a time per shard fanned out ~80 events a second in the bench (a Query, a PutItem
    // and a SendMessage each, in a row, before the endpoints were read once per batch and the
    // messages sent ten at a time); ten at once keep each merchant's events in order (the merchant
    // id is the partition key) and lift that tenfold.
    parallelizationFactor: 10,
  },
];

/** The events table's stream: its consumer fans each new event out to the merchant's endpoints. */
export const EVENTS_STREAM = STREAMS.find((stream) => stream.table === 'events') as StreamDefinition;

/**
 * How long a failing record is tried again before its batch is given up (Lambda's
 * MaximumRecordAgeInSeconds; the local poller's too): 23 hours, an hour inside the 24 hours a
 * DynamoDB stream keeps a record. Lambda reports to the on-failure queue a batch it discards for its
 * age; a record the stream drops first (the default, unlimited age) may be lost without a word.
 */
export const STREAM_GIVE_UP_AGE_SECONDS = 23 * 3600;

/**
 * The queue (physical name TABLE_PREFIX + this) where the stream's mapping describes each batch it
 * gave up on: records still failing `STREAM_GIVE_UP_AGE_SECONDS` after they arrived.
 */
export function givenUpQueueName(stream: StreamDefinition): string {
  return `${stream.consumer}-given-up`;
}
