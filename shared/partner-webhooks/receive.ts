import { WEBHOOK_REJECTED } from '#shared/definitions/alerts.ts';
import { ApiError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { enqueue } from '#shared/partner-webhooks/queue.ts';
import { deliveryReader } from '#shared/partners/delivery-reader.ts';
import type { WebhookDelivery } from '#shared/partners/partner.ts';

/**
 * A partner's webhook delivery: verified by the configured partner's adapter on the raw body, turned
 * into domain events, and queued; only then is it acknowledged. It never touches a balance.
 * `requestId` (the webhook request's `X-Request-Id`) travels with each queued event into the
 * consumer's log lines.
 */
export async function receiveDelivery(delivery: WebhookDelivery, requestId?: string): Promise<void> {
  const bank = deliveryReader();
  const problem = await bank.verifyDelivery(delivery);
  if (problem) {
    // Its address: a few refusals from one stranger are someone trying the public URL.
    logger.warn(WEBHOOK_REJECTED, { partner: bank.name, reason: problem, source_ip: delivery.sourceIp });
    throw new ApiError('invalid_signature', 'Invalid webhook signature');
  }
  const { deliveryId, events, partnersId } = bank.eventsOf(delivery);
  if (events.length === 0) {
    logger.info('webhook with nothing to do acknowledged', { partner: bank.name, delivery_id: deliveryId });
    return;
  }
  const receivedAt = new Date().toISOString();
  // A delivery of one event under the partner's own id: its payment takes the id (API.md §4: "same
  // `webhook-id` … credits nothing again", even with another body).
  const claim = partnersId && events.length === 1 ? `delivery:${bank.name}:${deliveryId}` : undefined;
  await enqueue(
    events.map((event) => ({
      ...event,
      delivery_id: deliveryId,
      ...(claim ? { delivery_claim: claim } : {}),
      received_at: receivedAt,
      ...(requestId ? { webhook_request_id: requestId } : {}),
    })),
  );
  logger.info('webhook queued', { partner: bank.name, delivery_id: deliveryId, events: events.length });
}
