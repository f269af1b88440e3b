import { listWebhookEndpointsRequest } from '#shared/contract/requests.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { listEndpoints, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/** GET /webhook-endpoints: the caller's enabled endpoints, without secrets. */
export const served = endpoint(listWebhookEndpointsRequest, async ({ caller }) => {
  const endpoints = await listEndpoints(caller.merchantId);
  return {
    message: 'Webhook endpoints retrieved',
    data: endpoints.map((endpoint) => toApiEndpoint(endpoint)),
    meta: { next_cursor: null },
  };
});

export const handler = httpHandler('list-webhook-endpoints', served);
