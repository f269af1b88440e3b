import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import type { QueuedEvent } from '#shared/partners/partner.ts';

/**
 * Queues the domain events of a verified delivery for the consumer; resolves once SQS has stored
 * every one durably, and throws (so the partner retries the whole delivery) if any failed. The
 * queue carries domain events only, never a partner's payload.
 */
export async function enqueue(events: readonly QueuedEvent[]): Promise<void> {
  const queueUrl = config.paymentsQueueUrl;
  if (!queueUrl) throw new Error('PAYMENTS_QUEUE_URL is not configured');
  await Promise.all(
    events.map((event) =>
      sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(event) })),
    ),
  );
}
