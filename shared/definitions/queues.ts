/**
 * Queue definitions, read by the CDK stack and the local bootstrap. Physical name = TABLE_PREFIX +
 * `name`. The consumer is the function (under `functions/`) that the queue drives.
 */
import type { Access } from '#shared/definitions/routes.ts';

export interface QueueDefinition {
  readonly name: string;
  readonly consumer: string;
  /** What the consumer may touch (least privilege on AWS). */
  readonly consumerAccess: Access;
  readonly consumerTimeoutSeconds: number;
  /** Receives before a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  /** Batches the local poller works on at once (Lambda's mapping starts with 5 for a standard queue). */
  readonly localConcurrency: number;
}

export const PAYMENT_EVENTS_QUEUE: QueueDefinition = {
  name: 'payment-events',
  consumer: 'process-payment-events',
  consumerAccess: {
    read: ['accountOwners', 'transferReferences'],
    write: ['merchants', 'ledgerEntries', 'transactions', 'payments', 'virtualAccounts', 'unmatchedPayments'],
  },
  consumerTimeoutSeconds: 30,
  maxReceiveCount: 5,
  batchSize: 10,
  localConcurrency: 4,
};

/** AWS asks for a visibility timeout of at least 6x the consumer's timeout. */
export function visibilityTimeoutSeconds(queue: QueueDefinition): number {
  return queue.consumerTimeoutSeconds * 6;
}

export function deadLetterQueueName(queue: QueueDefinition): string {
  return `${queue.name}-dlq`;
}
