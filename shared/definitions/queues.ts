/**
 * Queue definitions: a list the CDK stack and the local bootstrap and runtime loop over. Physical
 * name = TABLE_PREFIX + `name`. The consumer is the function (under `functions/`) the queue drives;
 * functions that send to a queue get its URL as `urlEnv`.
 */
import type { Access } from '#shared/definitions/routes.ts';

export interface QueueDefinition {
  readonly name: string;
  /** The environment variable that carries the queue's URL to the functions that send to it. */
  readonly urlEnv: string;
  readonly consumer: string;
  /** What the consumer may touch (least privilege on AWS). */
  readonly consumerAccess: Access;
  readonly consumerTimeoutSeconds: number;
  /** Receives before a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  /** Batches the local poller works on at once (Lambda's mapping starts with 5 for a standard queue). */
  readonly localConcurrency: number;
  /** An oldest message older than this alarms on AWS: the consumer is behind or stuck. */
  readonly maxMessageAgeSeconds: number;
  /**
   * Executions the queue's mapping may run at once on AWS (its MaximumConcurrency) when none are
   * reserved for the consumer; unset: as many as Lambda scales to.
   */
  readonly maxConcurrency?: number;
}

/** The service's queues (named here, not inferred, so access lists can name them without a cycle). */
export type QueueKey = 'paymentEvents' | 'webhookDeliveries';

export const QUEUES: Record<QueueKey, QueueDefinition> = {
  /** Partners' domain events (payments, refused payments, transfer verdicts) for the consumer. */
  paymentEvents: {
    name: 'payment-events',
    urlEnv: 'PAYMENTS_QUEUE_URL',
    consumer: 'process-payment-events',
    consumerAccess: {
      read: ['accountOwners', 'transferReferences'],
      write: [
        'merchants',
        'ledgerEntries',
        'transactions',
        'payments',
        'virtualAccounts',
        'unmatchedPayments',
        'events',
      ],
    },
    consumerTimeoutSeconds: 30,
    maxReceiveCount: 5,
    batchSize: 10,
    localConcurrency: 4,
    // Credited within seconds normally; a failing message is retried for ~15 minutes before the DLQ.
    maxMessageAgeSeconds: 300,
  },
  /**
   * Deliveries of events to merchants' endpoints, one message per attempt (a retry is a new,
   * delayed message), so no endpoint's failures are another's. Its consumers are shared: one that
   * holds connections without answering delays the others' deliveries while it holds them (README).
   */
  webhookDeliveries: {
    name: 'webhook-deliveries',
    urlEnv: 'WEBHOOK_DELIVERIES_QUEUE_URL',
    consumer: 'deliver-webhooks',
    consumerAccess: {
      read: ['events', 'webhookEndpoints'],
      write: ['webhookDeliveries'],
      // An attempt reads its delivery, event and endpoint in one call.
      batchRead: ['webhookDeliveries', 'events', 'webhookEndpoints'],
      sendsTo: ['webhookDeliveries'],
      signsWebhooks: true,
    },
    consumerTimeoutSeconds: 60,
    maxReceiveCount: 5,
    batchSize: 10,
    localConcurrency: 4,
    // Retries wait in the queue up to SQS's 15-minute delay (longer waits hop): 5 minutes more alarms.
    maxMessageAgeSeconds: 15 * 60 + 300,
    // A burst to slow endpoints (10 s an attempt) must not take the account's executions from the
    // API and its authorizer (1,000 by default): at most 100 batches at once, 1,000 attempts in
    // flight. It protects the account, not other merchants: a burst that holds all 100 holds them.
    maxConcurrency: 100,
  },
};

export const QUEUE_LIST: readonly QueueDefinition[] = Object.values(QUEUES);

/** The partner events queue (the consumer that credits payments and settles transfers). */
export const PAYMENT_EVENTS_QUEUE: QueueDefinition = QUEUES.paymentEvents;

/** AWS asks for a visibility timeout of at least 6x the consumer's timeout. */
export function visibilityTimeoutSeconds(queue: QueueDefinition): number {
  return queue.consumerTimeoutSeconds * 6;
}

export function deadLetterQueueName(queue: QueueDefinition): string {
  return `${queue.name}-dlq`;
}
