import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { logger } from '#shared/logger.ts';
import { traceKeys } from '#shared/partner-webhooks/trace.ts';
import type { PaymentReceived, PaymentRejected, QueuedEvent } from '#shared/partners/partner.ts';

/** The key of an unmatched payment or attempt: the partner's own id, qualified by the partner. */
export function unmatchedKey(event: PaymentReceived | PaymentRejected): string {
  const id = event.type === 'PaymentReceived' ? event.payment_id : `rejected:${event.attempt_id}`;
  return `${event.partner}:${id}`;
}

/**
 * What tells two deliveries under one partner id apart: the fields that move money. A redelivery has
 * the same; another payment reusing the id has another, and is kept beside the first.
 */
function variantOf(event: PaymentReceived | PaymentRejected): string {
  const { partner, account_ids: accountIds, amount } = event;
  return createHash('sha256')
    .update(JSON.stringify([partner, accountIds, amount, event.type]))
    .digest('hex')
    .slice(0, 24);
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
 * Keeps a payment (or a refused attempt) nobody can be credited for, for operators: never
 * credited, never dropped. A redelivery finds it kept already.
 */
export async function keepUnmatched(
  event: QueuedEvent & (PaymentReceived | PaymentRejected),
  reason: string,
): Promise<void> {
  const paymentKey = unmatchedKey(event);
  const variant = variantOf(event);
  logger.warn('payment kept as unmatched', { payment_key: paymentKey, variant, reason, ...traceKeys(event) });
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
