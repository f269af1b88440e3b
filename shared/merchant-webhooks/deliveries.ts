import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { wroteOnce } from '#shared/aws/written-once.ts';
import { sha256Hex } from '#shared/crypto/digest.ts';
import { newId } from '#shared/ids.ts';

/** One try to deliver an event to an endpoint, as `GET /events/{id}` shows it. */
export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One delivery of an event to one endpoint (a redelivery is a new one), with every attempt. */
export interface DeliveryRecord {
  /** `<merchant_id>#<event_id>`: an event's deliveries live together. */
  event_key: string;
  delivery_id: string;
  merchant_id: string;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (ISO), while pending. */
  next_attempt_at?: string;
  /** The random id of the last attempt recorded (`recordAttempt`), never shown. */
  last_attempt_id?: string;
  created_at: string;
  ttl: number;
}

/** The partition of an event's deliveries. */
export function eventKey(merchantId: string, eventId: string): string {
  return `${merchantId}#${eventId}`;
}

/**
 * Every delivery of one of a merchant's events, oldest first (deliveries made together, by id).
 * The table keeps them by id, which is a hash for first deliveries and random for redeliveries, so
 * the order is made here.
 */
export async function deliveriesOf(merchantId: string, eventId: string): Promise<DeliveryRecord[]> {
  const deliveries = await queryAll<DeliveryRecord>({
    TableName: tableName('webhookDeliveries'),
    KeyConditionExpression: 'event_key = :k',
    ExpressionAttributeValues: { ':k': eventKey(merchantId, eventId) },
    ConsistentRead: true,
  });
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return deliveries.sort((a, b) => order(a.created_at, b.created_at) || order(a.delivery_id, b.delivery_id));
}

/** A delivery as `GET /events/{id}` shows it. */
export function toApiDelivery(delivery: DeliveryRecord) {
  return { endpoint_id: delivery.endpoint_id, status: delivery.status, attempts: delivery.attempts };
}

/** How long delivery records are kept: as long as their events. */
const DELIVERY_RETENTION_SECONDS = 30 * 86_400;

/** What a delivery message names; everything else is read when it is handled. */
export interface DeliveryMessage {
  merchant_id: string;
  event_id: string;
  delivery_id: string;
  /**
   * The delivery's endpoint, so its attempt reads delivery, event and endpoint in one call. Absent
   * from messages queued before it was added: those read the delivery first to learn it.
   */
  endpoint_id?: string;
  /**
   * A redelivery (`POST /events/{id}/redeliver`): queued before its record is written, so whoever
   * comes first records it, the handler or the attempt (`deliver`). Recorded first, a delivery whose
   * message then failed to queue would show `pending` for good, with nothing to end it.
   */
  redelivery?: true;
}

/** The id of the first delivery of an event to an endpoint: the same however often it is fanned out. */
export function firstDeliveryId(eventId: string, endpointId: string): string {
  return `dlv_${sha256Hex(`${eventId}:${endpointId}`).slice(0, 24)}`;
}

/** A new delivery id (a redelivery is a delivery of its own). */
export function newDeliveryId(): string {
  return newId('dlv');
}

/**
 * Records a delivery of an event to an endpoint, pending; false if it existed already (a repeated
 * fan-out), in which case it is returned as stored.
 */
export async function createDelivery(
  message: DeliveryMessage,
  endpointId: string,
  now = new Date(),
): Promise<DeliveryRecord> {
  const delivery: DeliveryRecord = {
    event_key: eventKey(message.merchant_id, message.event_id),
    delivery_id: message.delivery_id,
    merchant_id: message.merchant_id,
    event_id: message.event_id,
    endpoint_id: endpointId,
    status: 'pending',
    attempts: [],
    created_at: now.toISOString(),
    ttl: Math.ceil(now.getTime() / 1000) + DELIVERY_RETENTION_SECONDS,
  };
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('webhookDeliveries'),
        Item: delivery,
        ConditionExpression: 'attribute_not_exists(delivery_id)',
        // The stored delivery comes back with the refusal: one call whether or not it existed.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return delivery;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return error.Item ? (unmarshall(error.Item) as DeliveryRecord) : delivery;
  }
}

/** Where a delivery is stored: its table and key. */
export function deliveryItemKey(message: DeliveryMessage) {
  return {
    TableName: tableName('webhookDeliveries'),
    Key: { event_key: eventKey(message.merchant_id, message.event_id), delivery_id: message.delivery_id },
  };
}

export async function getDelivery(message: DeliveryMessage): Promise<DeliveryRecord | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ ...deliveryItemKey(message), ConsistentRead: true }));
  return Item as DeliveryRecord | undefined;
}

/**
 * Appends one attempt and the delivery's new status, only if no other attempt was recorded since
 * `delivery` was read (a duplicate message never records the same attempt twice); false if one was.
 * True also when the write that meets an attempt already recorded is the SDK's retry of this one,
 * its answer lost (`writtenOnce`): a false would end the delivery's retries.
 */
export async function recordAttempt(
  delivery: DeliveryRecord,
  attempt: DeliveryAttempt,
  outcome: { status: DeliveryStatus; next_attempt_at?: string },
): Promise<boolean> {
  // This attempt's own mark, beside the attempts (whose list the API shows as stored).
  const attemptId = randomUUID();
  return wroteOnce(
    () =>
      dynamo.send(
        new UpdateCommand({
          ...deliveryItemKey(delivery),
          UpdateExpression: `SET attempts = list_append(attempts, :attempt), #status = :status, last_attempt_id = :id${
            outcome.next_attempt_at ? ', next_attempt_at = :next' : ' REMOVE next_attempt_at'
          }`,
          ConditionExpression: '#status = :pending AND size(attempts) = :count',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':attempt': [attempt],
            ':status': outcome.status,
            ':id': attemptId,
            ':pending': 'pending',
            ':count': delivery.attempts.length,
            ...(outcome.next_attempt_at ? { ':next': outcome.next_attempt_at } : {}),
          },
        }),
      ),
    async () => (await getDelivery(delivery))?.last_attempt_id === attemptId,
  );
}
