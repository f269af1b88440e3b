import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { logger } from '#shared/logger.ts';
import type {
  DeliveryUnusable,
  PaymentReceived,
  PaymentRejected,
  QueuedEvent,
} from '#shared/partners/partner.ts';

/** What is kept for operators: payments nobody can be credited for, refused attempts, unusable deliveries. */
type Kept = PaymentReceived | PaymentRejected | DeliveryUnusable;

/**
 * The key of a kept payment, attempt or delivery: the partner's own id, qualified by the partner;
 * a delivery whose id could not be read is kept under its body's hash.
 */
export function unmatchedKey(event: Kept): string {
  const id =
    event.type === 'PaymentReceived'
      ? event.payment_id
      : event.type === 'PaymentRejected'
        ? `rejected:${event.attempt_id}`
        : (event.partner_id ?? `body:${event.body_sha256}`);
  return `${event.partner}:${id}`;
}

/**
 * What tells two deliveries under one partner id apart: the fields that move money (an unusable
 * delivery: its whole body). A redelivery has the same; another payment reusing the id has
 * another, and is kept beside the first.
 */
function variantOf(event: Kept): string {
  const fields =
    event.type === 'DeliveryUnusable'
      ? [event.partner, event.body_sha256, event.type]
      : [event.partner, event.account_ids, event.amount, event.type];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 24);
}

/** Everything kept under one partner id, for operators and tests. */
export function unmatchedOf(partner: string, id: string): Promise<Record<string, unknown>[]> {
  return queryAll({
    TableName: tableName('unmatchedPayments'),
    KeyConditionExpression: 'payment_key = :k',
    ExpressionAttributeValues: { ':k': `${partner}:${id}` },
    ConsistentRead: true,
  });
}

/**
 * Keeps a payment (or a refused attempt, or a delivery the service cannot act on) nobody can be
 * credited for, for operators: never credited, never dropped. A redelivery finds it kept already.
 */
export async function keepUnmatched(event: QueuedEvent & Kept, reason: string): Promise<void> {
  const paymentKey = unmatchedKey(event);
  const variant = variantOf(event);
  logger.warn('payment kept as unmatched', { payment_key: paymentKey, variant, reason });
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('unmatchedPayments'),
        Item: { payment_key: paymentKey, variant, reason, event, received_at: event.received_at },
        ConditionExpression: 'attribute_not_exists(variant)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
