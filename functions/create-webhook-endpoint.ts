import { createWebhookEndpointRequest } from '#shared/contract/requests.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { createEndpoint, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/**
 * POST /webhook-endpoints: the URL checked against private addresses; the secret shown once, and
 * again to a retry with the same `Idempotency-Key` (200, `Idempotent-Replayed: true`), which makes
 * nothing.
 */
export const served = endpoint(createWebhookEndpointRequest, async ({ body, caller, idempotencyKey }) => {
  const { endpoint, secret, replayed } = await createEndpoint(caller.merchantId, body, idempotencyKey);
  const data = toApiEndpoint(endpoint, secret);
  return replayed
    ? { message: 'Webhook endpoint already created', data, headers: { 'Idempotent-Replayed': 'true' } }
    : { status: 201, message: 'Webhook endpoint created', data };
});

export const handler = httpHandler('create-webhook-endpoint', served);
