import { rotateWebhookSecretRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { rotateSecret, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/** POST /webhook-endpoints/{id}/rotate-secret: a new secret, shown once; the old one signs 24 h more. */
export const served = endpoint(rotateWebhookSecretRequest, async ({ params, caller }) => {
  if (params.id.length > 100) throw new NotFound('Webhook endpoint');
  const { endpoint, secret } = await rotateSecret(caller.merchantId, params.id);
  return { message: 'Webhook secret rotated', data: toApiEndpoint(endpoint, secret) };
});

export const handler = httpHandler('rotate-webhook-secret', served);
