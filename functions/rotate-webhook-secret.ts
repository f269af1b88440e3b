import { rotateWebhookSecretRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { rotateSecret, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/**
 * POST /webhook-endpoints/{id}/rotate-secret: a new secret, shown once; the old one signs 24 h more.
 * A retry with the same `Idempotency-Key` rotates nothing: the same answer, `Idempotent-Replayed: true`.
 */
export const served = endpoint(rotateWebhookSecretRequest, async ({ params, caller, idempotencyKey }) => {
  if (params.id.length > 100) throw new NotFound('Webhook endpoint');
  const { endpoint, secret, replayed } = await rotateSecret(caller.merchantId, params.id, idempotencyKey);
  return {
    message: 'Webhook secret rotated',
    data: toApiEndpoint(endpoint, secret),
    ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}),
  };
});

export const handler = httpHandler('rotate-webhook-secret', served);
