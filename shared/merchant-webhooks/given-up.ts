import { ChangeMessageVisibilityCommand, DeleteMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { tableName } from '#shared/aws/clients.ts';
import {
  bySentAt,
  hold,
  peekAll,
  queueUrlOf,
  receiveAll,
  release,
  sentAtOf,
} from '#shared/aws/dead-letters.ts';
import { queryAll } from '#shared/aws/query.ts';
import { scanAll } from '#shared/aws/scan.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { isTransient } from '#shared/aws/transient.ts';
import { config } from '#shared/config.ts';
import { QUEUES } from '#shared/definitions/queues.ts';
import { EVENTS_STREAM, givenUpQueueName } from '#shared/definitions/streams.ts';
import type { EventRecord } from '#shared/events/events.ts';
import { enqueueDeliveries } from '#shared/merchant-webhooks/delivery-queue.ts';
import { endpointsOncePerMerchant, recordFanOut } from '#shared/merchant-webhooks/fan-out.ts';

/**
 * The operator's way back from what the events stream gave up (runbook: `GivenUpAlarm`). Lambda's
 * mapping retries a failing record for as long as the stream keeps it, then sends a description of
 * the batch (its shard, sequence numbers and arrival times, never the records, which are gone by
 * then) to the stream's given-up queue. The events themselves are still in the events table for 30
 * days: the events created in the batch's time window are fanned out again, with the consumer's own
 * idempotent fan-out, and the message is deleted once every delivery it lacked is queued.
 */

/**
 * How far beyond a batch's arrival times its events are looked for: an event's `created_at` is
 * its writer's clock before its transaction (retried by the SDK) reached the stream, and arrival
 * times are whole seconds. Wider costs little but reads: an event fanned out a day ago has its
 * deliveries, and a second fan-out leaves alone every one that was tried.
 */
export const WINDOW_MARGIN_MS = 5 * 60_000;

/** A batch the stream gave up on, as Lambda described it, and the window its events are sought in. */
export interface GivenUpBatch {
  messageId: string;
  /** When the description was queued (ISO 8601), if SQS says. */
  sentAt: string | null;
  /** Why Lambda gave up (`RecordAgeExceeded`, `RetryAttemptsExhausted`…). */
  condition: string | null;
  shardId: string | null;
  firstSequence: string | null;
  lastSequence: string | null;
  batchSize: number | null;
  firstArrival: string | null;
  lastArrival: string | null;
  /** The `created_at` window to fan out again; null when the message does not describe a batch. */
  window: { from: string; to: string } | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value ? value : null);

/** Reads Lambda's description of a discarded stream batch (`DDBStreamBatchInfo`). */
export function describeGivenUp(message: Pick<Message, 'MessageId' | 'Body' | 'Attributes'>): GivenUpBatch {
  let parsed: Record<string, unknown> = {};
  try {
    const body: unknown = JSON.parse(message.Body ?? '');
    if (body && typeof body === 'object' && !Array.isArray(body)) parsed = body as Record<string, unknown>;
  } catch {
    // Not Lambda's JSON: listed with no window, never deleted by a replay.
  }
  const info = (parsed.DDBStreamBatchInfo ?? {}) as Record<string, unknown>;
  const context = (parsed.requestContext ?? {}) as Record<string, unknown>;
  const firstArrival = text(info.approximateArrivalOfFirstRecord);
  const lastArrival = text(info.approximateArrivalOfLastRecord);
  const first = Date.parse(firstArrival ?? '');
  const last = Date.parse(lastArrival ?? '');
  return {
    messageId: message.MessageId ?? '',
    sentAt: sentAtOf(message),
    condition: text(context.condition),
    shardId: text(info.shardId),
    firstSequence: text(info.startSequenceNumber),
    lastSequence: text(info.endSequenceNumber),
    batchSize: typeof info.batchSize === 'number' ? info.batchSize : null,
    firstArrival,
    lastArrival,
    window:
      Number.isFinite(first) && Number.isFinite(last) && first <= last
        ? {
            from: new Date(first - WINDOW_MARGIN_MS).toISOString(),
            to: new Date(last + WINDOW_MARGIN_MS).toISOString(),
          }
        : null,
  };
}

const givenUpQueue = () => queueUrlOf(givenUpQueueName(EVENTS_STREAM));

/** The batches the events stream gave up on, oldest first; they stay in the queue. */
export async function listGivenUp(): Promise<GivenUpBatch[]> {
  return (await peekAll(await givenUpQueue())).map(describeGivenUp).sort(bySentAt);
}

/** What fanning a window's events out again did. */
export interface FanOutReport {
  from: string;
  to: string;
  /** Merchants whose events were read. */
  merchants: number;
  /** Events created in the window. */
  events: number;
  /** Deliveries queued: those that did not exist, or existed but were never tried. */
  queued: number;
  /**
   * Events that can never be fanned out as they are (`isTransient` says no: malformed, or a request
   * DynamoDB refused as sent), passed over as the stream's consumer passes them over.
   */
  skipped: { merchant_id: string; event_id: string; error: string }[];
}

/** Event ids start with the time of their event (`newEventId`): a window is a range of ids. */
const eventIdAt = (time: number) => `evt_${time.toString(16).padStart(12, '0')}`;

async function merchantIds(): Promise<string[]> {
  const items = await scanAll<{ merchant_id: string }>({
    TableName: tableName('merchants'),
    ProjectionExpression: 'merchant_id',
  });
  return items.map((item) => item.merchant_id).sort();
}

/** What every window's fan-out needs: the deliveries queue, and every merchant's id. */
interface FanOutTarget {
  deliveriesQueue: string;
  merchants: string[];
}

async function fanOutTarget(): Promise<FanOutTarget> {
  return {
    deliveriesQueue: config.merchantWebhooks.queueUrl ?? (await queueUrlOf(QUEUES.webhookDeliveries.name)),
    merchants: await merchantIds(),
  };
}

/** Merchants whose window is read at once. */
const MERCHANTS_AT_ONCE = 8;

/**
 * Fans out again every event created from `from` to `to` (inclusive), merchant by merchant and
 * each merchant's events in order, as the stream's consumer would have: a delivery is recorded for
 * each endpoint registered by the time of the event, and queued unless it exists and was tried (a
 * delivery recorded but never tried is queued again: at least once, receivers dedupe on
 * `webhook-id`). Reads the merchants (a scan of their ids) and a range of each one's events. An
 * event that can never be fanned out is skipped and reported; any other failure throws, with
 * nothing lost (run it again: it is idempotent).
 */
export async function fanOutAgain(
  window: { from: string; to: string },
  /** Where the windows go, read once for several windows (`replayGivenUp`). */
  target: Promise<FanOutTarget> = fanOutTarget(),
): Promise<FanOutReport> {
  const from = Date.parse(window.from);
  const to = Date.parse(window.to);
  if (!(Number.isFinite(from) && Number.isFinite(to) && from <= to))
    throw new RangeError(`not a time window: ${window.from} to ${window.to}`);
  const { deliveriesQueue, merchants } = await target;
  let events = 0;
  let queued = 0;
  const skipped: FanOutReport['skipped'] = [];
  const fanOutMerchant = async (merchantId: string) => {
    const found = await queryAll<EventRecord>({
      TableName: tableName('events'),
      KeyConditionExpression: 'merchant_id = :m AND event_id BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':m': merchantId, ':from': eventIdAt(from), ':to': `${eventIdAt(to)}~` },
      ConsistentRead: true,
    });
    if (found.length === 0) return;
    const endpointsOf = endpointsOncePerMerchant();
    const messages = [];
    for (const event of found) {
      try {
        messages.push(...(await recordFanOut(event, endpointsOf)).messages);
      } catch (error) {
        if (isTransient(error)) throw error;
        skipped.push({ merchant_id: merchantId, event_id: event.event_id, error: String(error) });
      }
    }
    const [unqueued] = await enqueueDeliveries(messages, deliveriesQueue);
    if (unqueued)
      throw new Error(`deliveries of ${merchantId}'s events not queued (run it again): ${unqueued.reason}`);
    events += found.length;
    queued += messages.length;
  };
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined && next < merchants.length) {
      try {
        await fanOutMerchant(merchants[next++] as string);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: MERCHANTS_AT_ONCE }, worker));
  if (failure !== undefined) throw failure;
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    merchants: merchants.length,
    events,
    queued,
    skipped,
  };
}

/** One given-up batch replayed: its events fanned out again and its message deleted, or why not. */
export interface Replayed extends GivenUpBatch {
  fannedOut: FanOutReport | null;
  deleted: boolean;
  error: string | null;
}

/**
 * How long a batch being replayed stays hidden from everyone else (renewed as each one starts), so
 * that two operators replaying at once do not both fan out the same window.
 */
const REPLAY_HOLD_SECONDS = 15 * 60;

/**
 * Replays the batches the events stream gave up on (all, or the one with `messageId`; at most the
 * 500 that one listing reads): each one's window fanned out again, then its message deleted. A
 * message that describes no batch, or whose fan-out failed, stays in the queue (and is shown again
 * at once); the answer says why. Events skipped as never fan-out-able are in `fannedOut.skipped`.
 */
export async function replayGivenUp(options: { messageId?: string } = {}): Promise<Replayed[]> {
  const url = await givenUpQueue();
  const messages = await receiveAll(url);
  const chosen = options.messageId
    ? messages.filter((message) => message.MessageId === options.messageId)
    : messages;
  const kept = messages.filter((message) => !chosen.includes(message));
  const replayed: Replayed[] = [];
  // Read once for all the batches, when the first one needs it.
  let target: Promise<FanOutTarget> | undefined;
  try {
    await hold(url, chosen, REPLAY_HOLD_SECONDS);
    for (const message of chosen) {
      const batch = describeGivenUp(message);
      try {
        // Still ours (the listing's hold has not run out for another operator to take it).
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: url,
            ReceiptHandle: message.ReceiptHandle ?? '',
            VisibilityTimeout: REPLAY_HOLD_SECONDS,
          }),
        );
      } catch (error) {
        replayed.push({
          ...batch,
          fannedOut: null,
          deleted: false,
          error: `no longer held by this command (another replay has it?): ${String(error)}`,
        });
        continue;
      }
      if (!batch.window) {
        kept.push(message);
        replayed.push({
          ...batch,
          fannedOut: null,
          deleted: false,
          error: 'not a description of a stream batch',
        });
        continue;
      }
      let fannedOut: FanOutReport;
      try {
        target ??= fanOutTarget();
        fannedOut = await fanOutAgain(batch.window, target);
      } catch (error) {
        kept.push(message);
        replayed.push({ ...batch, fannedOut: null, deleted: false, error: String(error) });
        continue;
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle ?? '' }));
      replayed.push({ ...batch, fannedOut, deleted: true, error: null });
    }
  } finally {
    await release(url, kept);
  }
  return replayed;
}
