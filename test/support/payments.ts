import type { LocalGateway } from '#infra/local/gateway.ts';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
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
