import { getEventRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { getEvent, toApiEvent } from '#shared/events/events.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { deliveriesOf, toApiDelivery } from '#shared/merchant-webhooks/deliveries.ts';

/** GET /events/{id}: one of the caller's events with its deliveries and every attempt. */
export const served = endpoint(getEventRequest, async ({ params, caller }) => {
  const event = params.id.length <= 100 && (await getEvent(caller.merchantId, params.id));
  if (!event) throw new NotFound('Event');
  const deliveries = await deliveriesOf(caller.merchantId, event.event_id);
  return {
    message: 'Event retrieved',
    data: { ...toApiEvent(event), deliveries: deliveries.map(toApiDelivery) },
  };
});

export const handler = httpHandler('get-event', served);
