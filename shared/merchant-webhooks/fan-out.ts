import type { EventRecord } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import {
  createDelivery,
  type DeliveryMessage,
  firstDeliveryId,
  newDeliveryId,
} from '#shared/merchant-webhooks/deliveries.ts';
import { enqueueDelivery } from '#shared/merchant-webhooks/delivery-queue.ts';
import type { EndpointRecord } from '#shared/merchant-webhooks/endpoints.ts';
import { listEndpoints } from '#shared/merchant-webhooks/endpoints.ts';

/**
 * Starts a delivery of `event` to `endpoint` and queues its first attempt. A delivery that exists
 * already (a repeated fan-out) is queued again only while nothing was tried: a queued message may
 * have been lost between the record and the queue, and a duplicate is recorded once (deliveries
 * are at least once; receivers dedupe on `webhook-id`).
 */
async function startDelivery(
  event: EventRecord,
  endpoint: EndpointRecord,
  deliveryId: string,
): Promise<void> {
  const message: DeliveryMessage = {
    merchant_id: event.merchant_id,
    event_id: event.event_id,
    delivery_id: deliveryId,
  };
  const delivery = await createDelivery(message, endpoint.endpoint_id);
  if (delivery.status === 'pending' && delivery.attempts.length === 0) await enqueueDelivery(message);
}

/** A merchant's enabled endpoints: read now, or once per batch (see the stream consumer). */
export type EndpointLookup = (merchantId: string) => Promise<EndpointRecord[]>;

/** Every enabled endpoint of the event's merchant that subscribed to its type. */
export async function subscribers(
  event: EventRecord,
  endpointsOf: EndpointLookup = listEndpoints,
): Promise<EndpointRecord[]> {
  const endpoints = await endpointsOf(event.merchant_id);
  return endpoints.filter((endpoint) => endpoint.events.includes(event.type));
}

/**
 * A new event's first delivery to each endpoint that wants it (idempotent: ids derive from both).
 * Only endpoints registered by the time of the event: a stream read again from its start (the local
 * poller after a restart, a retried batch on AWS) must not send an endpoint the history from before
 * it existed. (`POST /events/{id}/redeliver` is how a merchant asks for an older event.)
 */
export async function fanOut(
  event: EventRecord,
  endpointsOf: EndpointLookup = listEndpoints,
): Promise<number> {
  const endpoints = (await subscribers(event, endpointsOf)).filter(
    (endpoint) => endpoint.created_at <= event.created_at,
  );
  await Promise.all(
    endpoints.map((endpoint) =>
      startDelivery(event, endpoint, firstDeliveryId(event.event_id, endpoint.endpoint_id)),
    ),
  );
  if (endpoints.length > 0)
    logger.info('event fanned out', { event_id: event.event_id, endpoints: endpoints.length });
  return endpoints.length;
}

/** A new delivery of an event (same `webhook-id`) to the given endpoints. */
export async function redeliver(event: EventRecord, endpoints: readonly EndpointRecord[]): Promise<string[]> {
  return Promise.all(
    endpoints.map(async (endpoint) => {
      const deliveryId = newDeliveryId();
      await startDelivery(event, endpoint, deliveryId);
      return deliveryId;
    }),
  );
}
