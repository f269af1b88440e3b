import { randomBytes } from 'node:crypto';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import type { DeliveryUnusable, QueuedEvent } from '#shared/partners/partner.ts';
import { assertMatchesContract } from '#test/support/contract.ts';

export { nipSessionId, paymentEvent };

/** Signs (with the test run's partner secret) and delivers a partner event to a gateway's webhook. */
export async function deliver(
  gateway: LocalGateway | string,
  event: { type: string; data: Record<string, unknown> },
  webhookId?: string,
) {
  const base = typeof gateway === 'string' ? gateway : gateway.url;
  const secret = process.env.PARTNER_WEBHOOK_SECRET ?? '';
  const delivered = await deliverWebhook(`${base}/webhooks/payments`, secret, event, webhookId);
  // The webhook's answers must match the OpenAPI document too.
  assertMatchesContract('POST', '/webhooks/payments', delivered.status, JSON.parse(delivered.body));
  return delivered;
}

/** A customer's payment into an account, delivered as the partner would. */
export function pay(
  gateway: LocalGateway,
  accountNumber: string,
  amount: number,
  sessionId = nipSessionId(),
  webhookId?: string,
) {
  return deliver(
    gateway,
    paymentEvent({ account_number: accountNumber, amount, session_id: sessionId }),
    webhookId,
  );
}

/**
 * Signs any body exactly as given (with the test run's partner secret) and posts it to a gateway's
 * sandbox webhook with the given content type: for bodies `JSON.stringify` cannot make.
 */
export async function deliverRaw(
  gateway: LocalGateway | string,
  body: string,
  options: { contentType?: string; webhookId?: string } = {},
) {
  const base = typeof gateway === 'string' ? gateway : gateway.url;
  const key = Buffer.from((process.env.PARTNER_WEBHOOK_SECRET ?? '').replace(/^whsec_/, ''), 'base64');
  const id = options.webhookId ?? `msg_${randomBytes(12).toString('hex')}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(`${base}/webhooks/payments`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(key, id, timestamp, body),
    },
    body,
  });
  const text = await response.text();
  assertMatchesContract('POST', '/webhooks/payments', response.status, JSON.parse(text));
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

/** A sandbox `payment.received` the service could not read (kept for operators under `sessionId`). */
export function anUnusableDelivery(sessionId: string, reason: string): QueuedEvent & DeliveryUnusable {
  return {
    type: 'DeliveryUnusable',
    partner: 'sandbox',
    partner_event: 'payment.received',
    partner_id: sessionId,
    reason,
    body: '{}',
    body_bytes: 2,
    body_sha256: randomBytes(32).toString('hex'),
    delivery_id: `d-${sessionId}`,
    received_at: new Date().toISOString(),
  };
}
