import { tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';

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
  created_at: string;
  ttl: number;
}

/** The partition of an event's deliveries. */
export function eventKey(merchantId: string, eventId: string): string {
  return `${merchantId}#${eventId}`;
}

/** Every delivery of one of a merchant's events, oldest first. */
export function deliveriesOf(merchantId: string, eventId: string): Promise<DeliveryRecord[]> {
  return queryAll<DeliveryRecord>({
    TableName: tableName('webhookDeliveries'),
    KeyConditionExpression: 'event_key = :k',
    ExpressionAttributeValues: { ':k': eventKey(merchantId, eventId) },
    ConsistentRead: true,
  });
}

/** A delivery as `GET /events/{id}` shows it. */
export function toApiDelivery(delivery: DeliveryRecord) {
  return { endpoint_id: delivery.endpoint_id, status: delivery.status, attempts: delivery.attempts };
}
