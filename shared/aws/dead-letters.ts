import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import { deadLetterQueueName, type QueueDefinition } from '#shared/definitions/queues.ts';
import { cutText } from '#shared/text.ts';

/**
 * Operators' view of a dead-letter queue: what is in it, and moving messages back to the queue they
 * came from (and the reading of a queue's every message that the given-up batches of a stream use
 * too). Only standard SQS calls, so it works on AWS and on any local SQS-protocol server.
 */

/** A queue and its dead-letter queue, by URL. */
export interface QueuePair {
  source: string;
  deadLetters: string;
}

/** A message of a dead-letter queue, as operators see it. */
export interface DeadLetter {
  messageId: string;
  /** Receives so far (in the source queue and the dead-letter queue together). */
  receiveCount: number;
  /** When it was first sent (ISO 8601). */
  sentAt: string | null;
  summary: string;
  body: string;
}

/** The URL of one of the service's queues, by its name without the stage's prefix. */
export async function queueUrlOf(name: string): Promise<string> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: config.tablePrefix + name }));
  if (!QueueUrl) throw new Error(`no queue ${config.tablePrefix + name}`);
  return QueueUrl;
}

/** The URLs of a queue of `shared/definitions/queues.ts` and of its dead-letter queue. */
export async function queuePair(queue: QueueDefinition): Promise<QueuePair> {
  return { source: await queueUrlOf(queue.name), deadLetters: await queueUrlOf(deadLetterQueueName(queue)) };
}

/** How long a message read by an operator stays hidden from others before it is shown again. */
const HOLD_SECONDS = 30;
/** Most messages read in one go (a few hundred: an operator's screen, not a bulk export). */
const MAX_MESSAGES = 500;

/**
 * Receives every message of a queue (up to `MAX_MESSAGES`), each hidden for `HOLD_SECONDS`, so one
 * pass sees each once. A message handed out twice keeps its latest receipt handle.
 */
export async function receiveAll(queueUrl: string): Promise<Message[]> {
  const held = new Map<string, Message>();
  while (held.size < MAX_MESSAGES) {
    const { Messages: messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        // A long poll asks every SQS server, so an empty answer means the queue has no visible message.
        WaitTimeSeconds: 1,
        VisibilityTimeout: HOLD_SECONDS,
        // Both spellings: SQS takes either, and some local servers know only the older one.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const fresh = messages.filter((message) => message.MessageId && !held.has(message.MessageId));
    for (const message of messages) if (message.MessageId) held.set(message.MessageId, message);
    if (fresh.length === 0) break;
  }
  return [...held.values()];
}

/** Hides received messages from every other reader for `seconds` more (0: visible again at once). */
export async function hold(queueUrl: string, messages: readonly Message[], seconds: number): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.slice(i, i + 10).map((message, j) => ({
          Id: String(j),
          ReceiptHandle: message.ReceiptHandle ?? '',
          VisibilityTimeout: seconds,
        })),
      }),
    );
  }
}

/** Makes held messages visible again at once (they stay in the queue as they were). */
export function release(queueUrl: string, messages: readonly Message[]): Promise<void> {
  return hold(queueUrl, messages, 0);
}

/** One line about a message: its event type and the ids in it, or the start of the body. */
export function summarize(body: string): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const fields = [
        'type',
        'partner',
        'payment_id',
        'attempt_id',
        'reference',
        'amount',
        'merchant_id',
        'event_id',
        'delivery_id',
      ]
        .filter((key) => typeof parsed[key] === 'string' || typeof parsed[key] === 'number')
        .map((key) => `${key}=${String(parsed[key])}`);
      if (fields.length) return cutText(fields.join(' '), 160);
    }
  } catch {
    // Not JSON: shown as text.
  }
  const text = body.replace(/\s+/g, ' ');
  const cut = cutText(text, 80);
  return cut === text ? text : `${cut}…`;
}

/** When a received message was first sent (ISO 8601), if SQS says. */
export function sentAtOf(message: Pick<Message, 'Attributes'>): string | null {
  const sent = Number(message.Attributes?.SentTimestamp);
  return Number.isFinite(sent) ? new Date(sent).toISOString() : null;
}

/** Oldest first, by `sentAt` (unknown first). */
export const bySentAt = (a: { sentAt: string | null }, b: { sentAt: string | null }) =>
  (a.sentAt ?? '').localeCompare(b.sentAt ?? '');

/** Every message of a queue (up to `MAX_MESSAGES`), left there and visible again at once. */
export async function peekAll(queueUrl: string): Promise<Message[]> {
  const messages = await receiveAll(queueUrl);
  await release(queueUrl, messages);
  return messages;
}

function toDeadLetter(message: Message): DeadLetter {
  return {
    messageId: message.MessageId ?? '',
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
    sentAt: sentAtOf(message),
    summary: summarize(message.Body ?? ''),
    body: message.Body ?? '',
  };
}

/** The messages of a dead-letter queue, oldest first; they stay in the queue, visible again at once. */
export async function listDeadLetters(deadLetters: string): Promise<DeadLetter[]> {
  return (await peekAll(deadLetters)).map(toDeadLetter).sort(bySentAt);
}

/** A message moved back: its id in the dead-letter queue and its new id in the source queue. */
export interface Redriven {
  from: string;
  to: string;
  summary: string;
}

/**
 * Moves messages of a dead-letter queue back to their source queue: all of them, or the one with
 * `messageId`. Each is sent to the source first and deleted from the dead-letter queue after, so a
 * crash in between leaves a copy in both (the consumers are idempotent), never none.
 */
export async function redriveDeadLetters(
  pair: QueuePair,
  options: { messageId?: string } = {},
): Promise<Redriven[]> {
  const messages = await receiveAll(pair.deadLetters);
  const chosen = options.messageId
    ? messages.filter((message) => message.MessageId === options.messageId)
    : messages;
  const others = messages.filter((message) => !chosen.includes(message));
  const moved: Redriven[] = [];
  try {
    for (const message of chosen) {
      const sent = await sqs.send(
        new SendMessageCommand({
          QueueUrl: pair.source,
          MessageBody: message.Body ?? '',
          MessageAttributes:
            message.MessageAttributes && Object.keys(message.MessageAttributes).length
              ? message.MessageAttributes
              : undefined,
        }),
      );
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: pair.deadLetters, ReceiptHandle: message.ReceiptHandle ?? '' }),
      );
      moved.push({
        from: message.MessageId ?? '',
        to: sent.MessageId ?? '',
        summary: summarize(message.Body ?? ''),
      });
    }
  } finally {
    await release(pair.deadLetters, others);
  }
  return moved;
}
