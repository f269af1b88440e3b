import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { isTransient } from '#shared/aws/transient.ts';
import { EVENT_NOT_FANNED_OUT } from '#shared/definitions/alerts.ts';
import type { EventRecord } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import type { DeliveryMessage } from '#shared/merchant-webhooks/deliveries.ts';
import { enqueueDeliveries } from '#shared/merchant-webhooks/delivery-queue.ts';
import { endpointsOncePerMerchant, recordFanOut } from '#shared/merchant-webhooks/fan-out.ts';
import { countFailedItems } from '#shared/metrics.ts';

/**
 * The events table's stream consumer: each new event becomes a delivery to every endpoint of its
 * merchant that wants it. Records are handled in order, each merchant's endpoints read once per
 * batch, and the first attempts of the whole batch queued at its end, ten to a SendMessageBatch. The
 * first record that failed (its deliveries not recorded, or one of their messages not queued) is
 * reported, so it and those after it come again (fan-out is idempotent), for 23 hours (the stream
 * keeps them 24; then the batch is given up and described): an outage delays deliveries, it never
 * loses them. A record that can never be fanned out (`isTransient` says no: malformed, or refused
 * as sent) is skipped with an alarmed log line instead, so it cannot hold up the events after it.
 * One at a time on purpose:
 * fanned out concurrently, a batch's writes competed with the credits for DynamoDB (the bench's
 * credits fell from 165/s to 93/s, and deliveries did not rise).
 */
/** The keys of a record's event, as far as they can be read (for the operator's log line). */
function eventKeys(record: DynamoDBRecord): { merchant_id?: string; event_id?: string } {
  const keys = record.dynamodb?.Keys;
  return { merchant_id: keys?.merchant_id?.S, event_id: keys?.event_id?.S };
}

/**
 * A record's event. An image that cannot be read (an attribute value of no known type) reads the
 * same way however often it is tried: a `TypeError`, which `isTransient` says is not worth a retry,
 * instead of the plain `Error` `unmarshall` throws, which would hold up the events after it.
 */
function readImage(image: Record<string, unknown>): EventRecord {
  try {
    return unmarshall(image as Record<string, AttributeValue>) as EventRecord;
  } catch (error) {
    throw new TypeError(`unreadable stream image: ${String(error)}`);
  }
}

export const handler = async (stream: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  logger.resetKeys();
  const endpointsOf = endpointsOncePerMerchant();
  const messages: DeliveryMessage[] = [];
  /** The sequence number of the record each message is for. */
  const recordOf: string[] = [];
  let failed: string | undefined;
  for (const record of stream.Records) {
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) continue;
    const sequence = record.dynamodb.SequenceNumber ?? '';
    try {
      const event = readImage(record.dynamodb.NewImage);
      for (const message of (await recordFanOut(event, endpointsOf)).messages) {
        messages.push(message);
        recordOf.push(sequence);
      }
    } catch (error) {
      if (!isTransient(error)) {
        // Tried again it would fail again, and hold up every event after it: an operator looks,
        // and finds the event by its keys (its id starts with its time: `npm run ops -- events
        // fan-out` takes the window around it), however late the stream reached it.
        logger.error(EVENT_NOT_FANNED_OUT, { sequence, ...eventKeys(record), error: String(error) });
        continue;
      }
      logger.error('fan-out failed', { sequence, error: String(error) });
      failed = sequence;
      break;
    }
  }
  // Messages are in the records' order, and queued in it: the first not queued belongs to the
  // earliest record to retry, and none after it was sent (retried, it would be queued twice).
  const [unqueued, ...more] = await enqueueDeliveries(messages);
  if (unqueued) {
    failed = recordOf[unqueued.position];
    logger.error('deliveries not queued', {
      sequence: failed,
      messages: 1 + more.length,
      error: unqueued.reason,
    });
  }
  if (failed === undefined) return { batchItemFailures: [] };
  countFailedItems(1);
  return { batchItemFailures: [{ itemIdentifier: failed }] };
};
