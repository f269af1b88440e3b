/**
 * Merchant webhooks: signed partner payments in, events out to the merchants' own endpoints. Per
 * payment, the time from its partner webhook being sent to its event arriving at the endpoint; and
 * events delivered per second against credits per second of the same payments, in the same run.
 * Imported once the environment points at the benchmark's local stack.
 */
import { createServer } from 'node:http';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { onboardMerchant } from '#shared/merchants/onboard.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { type LatencySummary, mapPool, sleep, summarize } from './stats.ts';

export interface WebhookOptions {
  webhookUrl: string;
  webhookSecret: string;
  merchants: number;
  payments: number;
  concurrency: number;
  maxWaitMs: number;
  progress: (message: string) => void;
}

export interface WebhookResult {
  expected: number;
  /** Distinct events (by webhook-id) of the sent payments that reached their endpoints. */
  delivered: number;
  complete: boolean;
  /** Partner webhook sent → the event at the merchant's endpoint. */
  latency: LatencySummary;
  creditPerSecond: number;
  deliveredPerSecond: number;
}

/** A merchant's endpoint: answers 200 at once and notes when each payment's event arrived. */
async function startEndpoint(arrivals: Map<string, number>) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          data?: { transaction?: { reference?: string } };
        };
        const session = event.data?.transaction?.reference?.replace(/^payment:/, '');
        if (session && !arrivals.has(session)) arrivals.set(session, at);
      } catch {
        // Not an event: counted nowhere.
      }
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/events`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function measureWebhooks(options: WebhookOptions): Promise<WebhookResult> {
  const arrivals = new Map<string, number>();
  const endpoint = await startEndpoint(arrivals);
  try {
    options.progress(
      `webhooks: ${options.merchants} merchants with an endpoint each, ${options.payments} payments`,
    );
    const merchants = await Promise.all(
      Array.from({ length: options.merchants }, async (_, i) => {
        const { merchant } = await onboardMerchant(`Bench Webhooks ${i}`);
        await createEndpoint(merchant.merchant_id, { url: endpoint.url, events: ['payment.received'] });
        return merchant;
      }),
    );
    const sentAt = new Map<string, number>();
    const paidTo = new Map<string, number>();
    const first = performance.now();
    await mapPool(
      Array.from({ length: options.payments }, (_, i) => i),
      options.concurrency,
      async (i) => {
        const merchant = merchants[i % merchants.length];
        if (!merchant) return;
        const session = nipSessionId();
        const amount = 100 + i;
        sentAt.set(session, performance.now());
        const { status } = await deliverWebhook(
          options.webhookUrl,
          options.webhookSecret,
          paymentEvent({ account_number: merchant.account_number, amount, session_id: session }),
        );
        if (status !== 200) sentAt.delete(session);
        else paidTo.set(merchant.merchant_id, (paidTo.get(merchant.merchant_id) ?? 0) + amount);
      },
    );
    // Credits: every merchant's balance reaches what was paid to it.
    const deadline = performance.now() + options.maxWaitMs;
    let creditedAt = Number.NaN;
    while (performance.now() < deadline) {
      const balances = await Promise.all(merchants.map((m) => getMerchant(m.merchant_id)));
      if (balances.every((m) => (m?.balance ?? 0) >= (paidTo.get(m?.merchant_id ?? '') ?? 0))) {
        creditedAt = performance.now();
        break;
      }
      await sleep(50);
    }
    while (performance.now() < deadline && [...sentAt.keys()].some((s) => !arrivals.has(s))) await sleep(50);
    const delivered = [...sentAt.keys()].filter((s) => arrivals.has(s));
    const latencies = delivered.map((s) => (arrivals.get(s) ?? 0) - (sentAt.get(s) ?? 0));
    const lastArrival = Math.max(...delivered.map((s) => arrivals.get(s) ?? 0));
    return {
      expected: sentAt.size,
      delivered: delivered.length,
      complete: delivered.length === sentAt.size,
      latency: summarize(latencies),
      creditPerSecond: (sentAt.size / (creditedAt - first)) * 1000,
      deliveredPerSecond: (delivered.length / (lastArrival - first)) * 1000,
    };
  } finally {
    await endpoint.close();
  }
}
