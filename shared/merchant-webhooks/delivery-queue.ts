import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import type { DeliveryMessage } from '#shared/merchant-webhooks/deliveries.ts';

// A module of its own: the functions that only read deliveries (GET /events/{id}) then carry no
// SQS client, whose construction at import would keep all of it in their bundle.

/** The longest delay SQS gives a message: longer waits go in several hops. */
const MAX_SQS_DELAY_SECONDS = 900;
/** The most messages one SendMessageBatch takes. */
const SQS_BATCH_ENTRIES = 10;

function queueUrl(): string {
  const url = config.merchantWebhooks.queueUrl;
  if (!url) throw new Error('WEBHOOK_DELIVERIES_QUEUE_URL is not configured');
  return url;
}

/** Queues a delivery to be tried after `delaySeconds` (at most SQS's 15 minutes; longer waits hop). */
export async function enqueueDelivery(message: DeliveryMessage, delaySeconds = 0): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl(),
      MessageBody: JSON.stringify(message),
      DelaySeconds: Math.max(0, Math.min(MAX_SQS_DELAY_SECONDS, Math.ceil(delaySeconds))),
    }),
  );
}

/**
 * Queues first attempts, ten to a SendMessageBatch, the batches at once. Answers the messages that
 * were not queued (SQS refused the entry, or the whole call failed), by position in `messages` and
 * in order, so the caller can have exactly those tried again.
 */
export async function enqueueDeliveries(
  messages: readonly DeliveryMessage[],
): Promise<{ position: number; reason: string }[]> {
  if (messages.length === 0) return [];
  const url = queueUrl();
  const batches = Array.from({ length: Math.ceil(messages.length / SQS_BATCH_ENTRIES) }, (_, b) =>
    messages
      .slice(b * SQS_BATCH_ENTRIES, (b + 1) * SQS_BATCH_ENTRIES)
      .map((message, i) => ({ position: b * SQS_BATCH_ENTRIES + i, message })),
  );
  const unqueued = await Promise.all(
    batches.map(async (batch) => {
      try {
        const { Failed } = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map(({ position, message }) => ({
              Id: String(position),
              MessageBody: JSON.stringify(message),
            })),
          }),
        );
        return (Failed ?? []).map((entry) => ({
          position: Number(entry.Id),
          reason: `${entry.Code ?? 'refused'}: ${entry.Message ?? ''}`,
        }));
      } catch (error) {
        return batch.map(({ position }) => ({ position, reason: String(error) }));
      }
    }),
  );
  return unqueued.flat().sort((a, b) => a.position - b.position);
}
