import { createWebhookEndpointRequest } from '#shared/contract/requests.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { createEndpoint, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/** POST /webhook-endpoints: the URL checked against private addresses; the secret shown once. */
export const served = endpoint(createWebhookEndpointRequest, async ({ body, caller }) => {
  const { endpoint, secret } = await createEndpoint(caller.merchantId, body);
  return { status: 201, message: 'Webhook endpoint created', data: toApiEndpoint(endpoint, secret) };
});

export const handler = httpHandler('create-webhook-endpoint', served);
