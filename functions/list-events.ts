import { listEventsRequest } from '#shared/contract/requests.ts';
import { listEvents, toApiEvent } from '#shared/events/events.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';

/** GET /events: the caller's events of the last 30 days, newest first, optionally of one type. */
export const served = endpoint(listEventsRequest, async ({ query, caller }) => {
  const page = await listEvents(caller.merchantId, query);
  return {
    message: 'Events retrieved',
    data: page.items.map(toApiEvent),
    meta: { next_cursor: page.nextCursor },
  };
});

export const handler = httpHandler('list-events', served);
