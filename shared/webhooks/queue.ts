import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import type { QueuedEvent } from '#shared/webhooks/events.ts';

/** Queues a verified partner event for the consumer; resolves once SQS has stored it durably. */
export async function enqueue(event: QueuedEvent): Promise<void> {
  if (!config.paymentsQueueUrl) throw new Error('PAYMENTS_QUEUE_URL is not configured');
  await sqs.send(
    new SendMessageCommand({ QueueUrl: config.paymentsQueueUrl, MessageBody: JSON.stringify(event) }),
  );
}
