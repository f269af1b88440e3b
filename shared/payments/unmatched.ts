import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { logger } from '#shared/logger.ts';
import type { PaymentReceived, PaymentRejected, QueuedEvent } from '#shared/partners/partner.ts';

/** The key of an unmatched payment or attempt: the partner's own id, qualified by the partner. */
export function unmatchedKey(event: PaymentReceived | PaymentRejected): string {
  const id = event.type === 'PaymentReceived' ? event.payment_id : `rejected:${event.attempt_id}`;
  return `${event.partner}:${id}`;
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
  logger.warn('payment kept as unmatched', { payment_key: paymentKey, reason });
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('unmatchedPayments'),
        Item: { payment_key: paymentKey, reason, event, received_at: event.received_at },
        ConditionExpression: 'attribute_not_exists(payment_key)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
