import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import type { DeliveryMessage } from '#shared/merchant-webhooks/deliveries.ts';

// A module of its own: the functions that only read deliveries (GET /events/{id}) then carry no
// SQS client, whose construction at import would keep all of it in their bundle.

/** The longest delay SQS gives a message: longer waits go in several hops. */
const MAX_SQS_DELAY_SECONDS = 900;

/** Queues a delivery to be tried after `delaySeconds` (at most SQS's 15 minutes; longer waits hop). */
export async function enqueueDelivery(message: DeliveryMessage, delaySeconds = 0): Promise<void> {
  const queueUrl = config.merchantWebhooks.queueUrl;
  if (!queueUrl) throw new Error('WEBHOOK_DELIVERIES_QUEUE_URL is not configured');
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify(message),
      DelaySeconds: Math.max(0, Math.min(MAX_SQS_DELAY_SECONDS, Math.ceil(delaySeconds))),
    }),
  );
}
