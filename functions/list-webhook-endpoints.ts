import { listWebhookEndpointsRequest } from '#shared/contract/requests.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { listEndpoints, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { ownList, pageOf } from '#shared/pagination.ts';

/** GET /webhook-endpoints: the caller's enabled endpoints, newest first, without secrets. */
export const served = endpoint(listWebhookEndpointsRequest, async ({ caller, query }) => {
  const page = pageOf(
    ownList('webhook_endpoints', caller.merchantId),
    await listEndpoints(caller.merchantId),
    (endpoint) => ({ created_at: endpoint.created_at, id: endpoint.endpoint_id }),
    query.limit,
    query.cursor,
  );
  return {
    message: 'Webhook endpoints retrieved',
    data: page.items.map((endpoint) => toApiEndpoint(endpoint)),
    meta: { next_cursor: page.next_cursor },
  };
});

export const handler = httpHandler('list-webhook-endpoints', served);
