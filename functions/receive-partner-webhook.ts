import { webhookHandler } from '#shared/http/stack.ts';
import { receiveDelivery } from '#shared/partner-webhooks/receive.ts';

/**
 * POST /webhooks/payments and /webhooks/paystack (and the function URL): the configured partner's
 * signed delivery, verified on the raw body and queued as domain events before the 200.
 */
export const handler = webhookHandler('receive-partner-webhook', async (delivery) => {
  await receiveDelivery(delivery, delivery.requestId);
  return { message: 'Accepted' };
});
