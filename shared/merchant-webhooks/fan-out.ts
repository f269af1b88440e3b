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
 * Records a delivery of `event` to `endpoint`, pending, and answers its message when its first
 * attempt is to be queued. A delivery that exists already (a repeated fan-out) is queued again only
 * while nothing was tried: a queued message may have been lost between the record and the queue,
 * and a duplicate is recorded once (deliveries are at least once; receivers dedupe on `webhook-id`).
 */
async function recordDelivery(
  event: EventRecord,
  endpoint: EndpointRecord,
  deliveryId: string,
): Promise<DeliveryMessage | undefined> {
  const message: DeliveryMessage = {
    merchant_id: event.merchant_id,
    event_id: event.event_id,
    delivery_id: deliveryId,
    endpoint_id: endpoint.endpoint_id,
  };
  const delivery = await createDelivery(message, endpoint.endpoint_id);
  return delivery.status === 'pending' && delivery.attempts.length === 0 ? message : undefined;
}

/** A merchant's enabled endpoints: read now, or once per batch (see the stream consumer). */
export type EndpointLookup = (merchantId: string) => Promise<EndpointRecord[]>;

/** A lookup that reads each merchant's endpoints once, for a batch of events fanned out together. */
export function endpointsOncePerMerchant(): EndpointLookup {
  const read = new Map<string, Promise<EndpointRecord[]>>();
  return (merchantId) => {
    const endpoints = read.get(merchantId) ?? listEndpoints(merchantId);
    read.set(merchantId, endpoints);
    return endpoints;
  };
}

/** Every enabled endpoint of the event's merchant that subscribed to its type. */
export async function subscribers(
  event: EventRecord,
  endpointsOf: EndpointLookup = listEndpoints,
): Promise<EndpointRecord[]> {
  const endpoints = await endpointsOf(event.merchant_id);
  return endpoints.filter((endpoint) => endpoint.events.includes(event.type));
}

/**
 * Records a new event's first delivery to each endpoint that wants it (idempotent: ids derive from
 * both); answers how many endpoints want it and the messages of the first attempts to queue. Only endpoints registered by the
 * time of the event: a stream read again from its start (the local poller after a restart, a retried
 * batch on AWS) must not send an endpoint the history from before it existed.
 * (`POST /events/{id}/redeliver` is how a merchant asks for an older event.)
 */
export async function recordFanOut(
  event: EventRecord,
  endpointsOf: EndpointLookup = listEndpoints,
): Promise<{ endpoints: number; messages: DeliveryMessage[] }> {
  const endpoints = (await subscribers(event, endpointsOf)).filter(
    (endpoint) => endpoint.created_at <= event.created_at,
  );
  const messages = await Promise.all(
    endpoints.map((endpoint) =>
      recordDelivery(event, endpoint, firstDeliveryId(event.event_id, endpoint.endpoint_id)),
    ),
  );
  if (endpoints.length > 0)
    logger.info('event fanned out', { event_id: event.event_id, endpoints: endpoints.length });
  return {
    endpoints: endpoints.length,
    messages: messages.filter((message): message is DeliveryMessage => message !== undefined),
  };
}

/**
 * A new delivery of an event (same `webhook-id`) to the given endpoints: each queued first, then
 * recorded (unless its attempt recorded it first). A failed queueing leaves no record behind; one
 * recorded before its message was queued would stay `pending` for good if the message then failed,
 * as nothing fans a redelivery out again. Every endpoint's queueing and record is finished before
 * any failure is thrown: the deliveries that were queued are then all shown.
 */
export async function redeliver(event: EventRecord, endpoints: readonly EndpointRecord[]): Promise<string[]> {
  const outcomes = await Promise.allSettled(
    endpoints.map(async (endpoint) => {
      const message: DeliveryMessage = {
        merchant_id: event.merchant_id,
        event_id: event.event_id,
        delivery_id: newDeliveryId(),
        endpoint_id: endpoint.endpoint_id,
        redelivery: true,
      };
      await enqueueDelivery(message);
      await createDelivery(message, endpoint.endpoint_id);
      return message.delivery_id;
    }),
  );
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<string>).value);
}
