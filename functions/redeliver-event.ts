import { redeliverEventRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { getEvent } from '#shared/events/events.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { getEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { redeliver, subscribers } from '#shared/merchant-webhooks/fan-out.ts';

/**
 * POST /events/{id}/redeliver: a new delivery (same `webhook-id`) to one enabled endpoint, or to
 * every enabled endpoint subscribed to the event's type.
 */
export const served = endpoint(redeliverEventRequest, async ({ params, body, caller }) => {
  const event = params.id.length <= 100 && (await getEvent(caller.merchantId, params.id));
  if (!event) throw new NotFound('Event');
  let endpoints = await subscribers(event);
  if (body?.endpoint_id !== undefined) {
    const endpoint = await getEndpoint(caller.merchantId, body.endpoint_id);
    if (endpoint?.status !== 'enabled') throw new NotFound('Webhook endpoint');
    endpoints = [endpoint];
  }
  await redeliver(event, endpoints);
  return {
    status: 202,
    message: 'Redelivery queued',
    data: {
      event_id: event.id,
      deliveries: endpoints.map((endpoint) => ({
        endpoint_id: endpoint.endpoint_id,
        status: 'pending',
        attempts: [],
      })),
    },
  };
});

export const handler = httpHandler('redeliver-event', served);
