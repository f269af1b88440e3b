import type { QueuedEvent } from '#shared/partners/partner.ts';

/**
 * The log keys that tie a consumer's line to the webhook delivery behind it: the webhook request's
 * `X-Request-Id` (`webhook_request_id`; the webhook's own lines carry it as `request_id`), the
 * partner's delivery id, and the partner's id of what the event is about.
 */
export function traceKeys(event: QueuedEvent): Record<string, string | undefined> {
  const keys = {
    webhook_request_id: event.webhook_request_id,
    delivery_id: event.delivery_id,
    partner: event.partner,
  };
  switch (event.type) {
    case 'PaymentReceived':
      return { ...keys, payment_id: event.payment_id };
    case 'PaymentRejected':
      return { ...keys, attempt_id: event.attempt_id };
    case 'TransferSettled':
      return { ...keys, transfer_reference: event.reference };
    case 'DeliveryUnusable':
      return { ...keys, partner_id: event.partner_id ?? undefined, body_sha256: event.body_sha256 };
  }
}
