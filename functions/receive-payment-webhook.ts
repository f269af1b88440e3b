import { ApiError } from '#shared/errors.ts';
import { webhookHandler } from '#shared/http/stack.ts';
import { logger } from '#shared/logger.ts';
import { webhookKeys } from '#shared/secrets.ts';
import { parsePartnerEvent } from '#shared/webhooks/events.ts';
import { enqueue } from '#shared/webhooks/queue.ts';
import { signatureProblem } from '#shared/webhooks/signature.ts';

/**
 * POST /webhooks/payments (and the function URL): verify the partner's signature on the raw body,
 * queue the event, and only then answer 200. It never touches a balance.
 */
export const handler = webhookHandler('receive-payment-webhook', async ({ rawBody, headers }) => {
  const webhookId = headers['webhook-id'];
  const problem = signatureProblem(
    {
      id: webhookId,
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      body: rawBody,
    },
    await webhookKeys(),
  );
  if (problem) {
    logger.warn('webhook rejected', { reason: problem });
    throw new ApiError('invalid_signature', 'Invalid webhook signature');
  }
  const event = parsePartnerEvent(rawBody);
  if (event) {
    await enqueue({ ...event, webhook_id: webhookId ?? '', received_at: new Date().toISOString() });
  } else {
    logger.info('webhook of an unknown type ignored', { webhook_id: webhookId });
  }
  return { message: 'Accepted' };
});
