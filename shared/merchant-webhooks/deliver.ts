import { getItems } from '#shared/aws/batch-get.ts';
import { config } from '#shared/config.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import { type EventRecord, eventItemKey, type MerchantEvent, toApiEvent } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import {
  createDelivery,
  type DeliveryAttempt,
  type DeliveryMessage,
  type DeliveryRecord,
  deliveryItemKey,
  getDelivery,
  recordAttempt,
} from '#shared/merchant-webhooks/deliveries.ts';
import { enqueueDelivery } from '#shared/merchant-webhooks/delivery-queue.ts';
import { type EndpointRecord, endpointItemKey, signingSecrets } from '#shared/merchant-webhooks/endpoints.ts';
import { checkWebhookUrl, type DeliveryResult, postPinned } from '#shared/merchant-webhooks/url-guard.ts';

/**
 * One attempt of one delivery (API.md §8): the URL checked again (SSRF), the event signed per
 * Standard Webhooks with every active secret, POSTed with a timeout, the attempt recorded, and the
 * next attempt queued on the retry schedule, or the delivery ended.
 */

/** The Standard Webhooks headers of an event's delivery: one `v1,` signature per active secret. */
export function signedHeaders(
  event: MerchantEvent,
  body: string,
  secrets: readonly string[],
  now = Date.now(),
) {
  const timestamp = Math.floor(now / 1000);
  const signatures = secrets.map((secret) =>
    sign(Buffer.from(secret.replace(/^whsec_/, ''), 'base64'), event.id, timestamp, body),
  );
  return {
    'content-type': 'application/json',
    'user-agent': 'naira-pay-webhooks/1',
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

/** One attempt, its host's lookup and its request within the delivery timeout together. */
async function attempt(event: MerchantEvent, endpoint: EndpointRecord): Promise<DeliveryResult> {
  const { timeoutMs } = config.merchantWebhooks;
  const started = Date.now();
  const check = await checkWebhookUrl(endpoint.url, {
    allowPrivate: config.merchantWebhooks.allowPrivate,
    resolveTimeoutMs: timeoutMs,
  });
  if (!check.ok)
    return {
      status: null,
      error: `invalid_url: ${check.reason}`,
      duration_ms: Date.now() - started,
      body_excerpt: null,
    };
  const body = JSON.stringify(event);
  const headers = signedHeaders(event, body, await signingSecrets(endpoint));
  return postPinned(check, body, headers, Math.max(1, timeoutMs - (Date.now() - started)));
}

/** Ends a delivery that can never be made (its event expired, its endpoint deleted). */
async function abandon(delivery: DeliveryRecord, error: string): Promise<void> {
  const at = new Date().toISOString();
  await recordAttempt(delivery, { at, status_code: null, error, duration_ms: 0 }, { status: 'failed' });
  logger.info('delivery abandoned', { delivery_id: delivery.delivery_id, reason: error });
}

/**
 * What an attempt reads, all strongly consistent and in one BatchGetItem: the delivery (its status
 * and attempts so far), its event and its endpoint (URL, status and secrets as they are now). A
 * message queued before messages named their endpoint reads the delivery first to learn it.
 */
async function readAttempt(message: DeliveryMessage) {
  const endpointId = message.endpoint_id ?? (await getDelivery(message))?.endpoint_id;
  if (endpointId === undefined) return {};
  const [delivery, event, endpoint] = await getItems([
    { ...deliveryItemKey(message), ConsistentRead: true },
    { ...eventItemKey(message.merchant_id, message.event_id), ConsistentRead: true },
    { ...endpointItemKey(message.merchant_id, endpointId), ConsistentRead: true },
  ]);
  if (delivery && delivery.endpoint_id !== endpointId)
    throw new Error(`delivery ${message.delivery_id} is to ${delivery.endpoint_id}, not ${endpointId}`);
  return {
    delivery: delivery as DeliveryRecord | undefined,
    stored: event as EventRecord | undefined,
    endpoint: endpoint as EndpointRecord | undefined,
  };
}

/**
 * Handles one delivery message; throws only when it must be retried as it is (storage failed) or
 * names an endpoint its delivery is not to.
 */
export async function deliver(message: DeliveryMessage, now = Date.now()): Promise<void> {
  const read = await readAttempt(message);
  const { stored, endpoint } = read;
  // A redelivery's message is queued before its record is written: the first to handle it records it.
  const delivery =
    read.delivery ??
    (message.redelivery && message.endpoint_id !== undefined
      ? await createDelivery(message, message.endpoint_id)
      : undefined);
  if (delivery?.status !== 'pending') return;
  // Its next messages name the endpoint, whatever this one named.
  const next: DeliveryMessage = { ...message, endpoint_id: delivery.endpoint_id };
  const due = delivery.next_attempt_at ? Date.parse(delivery.next_attempt_at) : now;
  // SQS delays at most 15 minutes: a later attempt hops through the queue until it is due.
  if (due - now > 1_000) return enqueueDelivery(next, (due - now) / 1000);
  if (!stored) return abandon(delivery, 'event expired');
  if (endpoint?.status !== 'enabled') return abandon(delivery, 'endpoint deleted');

  // When this attempt began: a batch's deliveries share their `now`, taken before their reads.
  const at = new Date().toISOString();
  const result = await attempt(toApiEvent(stored), endpoint);
  const record: DeliveryAttempt = {
    at,
    status_code: result.status,
    error: result.error,
    duration_ms: result.duration_ms,
  };
  const delivered = result.status !== null && result.status >= 200 && result.status < 300;
  const schedule = config.merchantWebhooks.retrySchedule;
  const retryIn = schedule[delivery.attempts.length];
  const outcome = delivered
    ? { status: 'delivered' as const }
    : retryIn === undefined
      ? { status: 'failed' as const }
      : { status: 'pending' as const, next_attempt_at: new Date(Date.now() + retryIn * 1000).toISOString() };
  if (!(await recordAttempt(delivery, record, outcome))) return;
  logger.info('delivery attempt', {
    delivery_id: delivery.delivery_id,
    event_id: message.event_id,
    endpoint_id: delivery.endpoint_id,
    attempt: delivery.attempts.length + 1,
    status_code: result.status,
    error: result.error,
    outcome: outcome.status,
  });
  if (outcome.status === 'pending' && retryIn !== undefined) await enqueueDelivery(next, retryIn);
}
