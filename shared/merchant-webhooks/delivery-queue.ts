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

type Unqueued = { position: number; reason: string };

/**
 * Sends some messages in one SendMessageBatch and answers those SQS did not take (all of them if
 * the call itself failed).
 */
async function sendBatch(
  url: string,
  batch: readonly { position: number; message: DeliveryMessage }[],
): Promise<Unqueued[]> {
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
}

/**
 * Queues first attempts in order, ten to a SendMessageBatch, what SQS did not take sent once more.
 * It stops at the first batch that still fails and answers, by position in `messages` and in
 * order, every message not queued: that batch's failures and all the messages after it (sending
 * those would only queue them twice once the caller has them tried again).
 */
export async function enqueueDeliveries(
  messages: readonly DeliveryMessage[],
  /** The deliveries queue's URL when this process has none configured (the operator's CLI). */
  givenUrl?: string,
): Promise<Unqueued[]> {
  const positioned = messages.map((message, position) => ({ position, message }));
  let url: string;
  try {
    url = givenUrl ?? queueUrl();
  } catch (error) {
    return positioned.map(({ position }) => ({ position, reason: String(error) }));
  }
  for (let start = 0; start < positioned.length; start += SQS_BATCH_ENTRIES) {
    const batch = positioned.slice(start, start + SQS_BATCH_ENTRIES);
    const refused = new Set((await sendBatch(url, batch)).map(({ position }) => position));
    if (refused.size === 0) continue;
    const failed = await sendBatch(
      url,
      batch.filter(({ position }) => refused.has(position)),
    );
    if (failed.length === 0) continue;
    const first = Math.min(...failed.map(({ position }) => position));
    return [
      ...failed.sort((a, b) => a.position - b.position),
      ...positioned
        .slice(start + SQS_BATCH_ENTRIES)
        .map(({ position }) => ({ position, reason: `not sent: message ${first} was not queued` })),
    ];
  }
  return [];
}
