import { deleteWebhookEndpointRequest } from '#shared/contract/requests.ts';
import { NotFound } from '#shared/errors.ts';
import { endpoint, httpHandler } from '#shared/http/stack.ts';
import { deleteEndpoint, toApiEndpoint } from '#shared/merchant-webhooks/endpoints.ts';

/** DELETE /webhook-endpoints/{id}: nothing more is sent to it. */
export const served = endpoint(deleteWebhookEndpointRequest, async ({ params, caller }) => {
  if (params.id.length > 100) throw new NotFound('Webhook endpoint');
  const endpoint = await deleteEndpoint(caller.merchantId, params.id);
  return { message: 'Webhook endpoint deleted', data: toApiEndpoint(endpoint) };
});

export const handler = httpHandler('delete-webhook-endpoint', served);
