/**
 * Merchant webhooks of the credit pipeline: a local endpoint (node:http on 127.0.0.1, answers 200)
 * that notes when each `payment.received` event arrives, and the statistics of a run's payments:
 * partner webhook sent → event at the endpoint, and distinct events delivered per second. Needs
 * nothing of the service: the endpoints are registered by the pipeline.
 */
import { createServer } from 'node:http';
import { type LatencySummary, sleep, summarize } from './stats.ts';

/** The first arrival of one event (one `webhook-id`) and how many times it came (at least once). */
export interface Arrival {
  at: number;
  times: number;
}

export interface WebhookReceiver {
  /** Where the endpoints point. */
  url: string;
  /** Per session id (from `data.transaction.reference`), its events by `webhook-id`. */
  arrivals: ReadonlyMap<string, ReadonlyMap<string, Arrival>>;
  close(): Promise<void>;
}

export interface WebhookStats {
  /** Payments accepted by the service: one event each is expected. */
  expected: number;
  /** Distinct `webhook-id`s of the expected payments that reached the endpoint. */
  delivered: number;
  /** Every expected payment's event arrived before the wait ended. */
  complete: boolean;
  /** Arrivals of an event already received (deliveries are at least once). */
  repeats: number;
  /** First webhook sent → the last expected event's arrival (or the end of the wait). */
  elapsedMs: number;
  deliveredPerSecond: number;
  /** Per event: its first arrival at the endpoint − the time its payment's partner webhook was sent. */
  latency: LatencySummary;
}

const POLL_MS = 50;

/** The session id of a payment event's body (`payment:<session_id>`), if it is one. */
function sessionOf(body: string): string | undefined {
  try {
    const event = JSON.parse(body) as { data?: { transaction?: { reference?: unknown } } };
    const reference = event.data?.transaction?.reference;
    return typeof reference === 'string' && reference.startsWith('payment:')
      ? reference.slice('payment:'.length)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Starts the endpoint on a free loopback port; arrival times are `Date.now()`, as the send times. */
export async function startReceiver(): Promise<WebhookReceiver> {
  const arrivals = new Map<string, Map<string, Arrival>>();
  const server = createServer((request, response) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhookId = request.headers['webhook-id'];
      const session = sessionOf(Buffer.concat(chunks).toString('utf8'));
      if (typeof webhookId === 'string' && session !== undefined) {
        const events = arrivals.get(session) ?? new Map<string, Arrival>();
        arrivals.set(session, events);
        const seen = events.get(webhookId);
        if (seen) seen.times++;
        else events.set(webhookId, { at, times: 1 });
      }
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('bench: receiver has no port');
  return {
    url: `http://127.0.0.1:${address.port}/webhooks`,
    arrivals,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The statistics of the payments sent at `sentAt` (session id → send time) from what has arrived. */
function webhookStats(
  receiver: WebhookReceiver,
  sentAt: ReadonlyMap<string, number>,
  firstSent: number,
  waitEnd: number,
): WebhookStats {
  const latencies: number[] = [];
  let reached = 0;
  let repeats = 0;
  let lastArrival = firstSent;
  for (const [session, sent] of sentAt) {
    const events = receiver.arrivals.get(session);
    if (!events?.size) continue;
    reached++;
    for (const { at, times } of events.values()) {
      latencies.push(at - sent);
      repeats += times - 1;
      lastArrival = Math.max(lastArrival, at);
    }
  }
  const complete = reached === sentAt.size;
  const elapsedMs = (complete ? lastArrival : waitEnd) - firstSent;
  return {
    expected: sentAt.size,
    delivered: latencies.length,
    complete,
    repeats,
    elapsedMs,
    deliveredPerSecond: latencies.length / (elapsedMs / 1000),
    latency: summarize(latencies),
  };
}

/**
 * Waits until every payment of `sentAt` has its event at the endpoint, or until `deadline`
 * (`Date.now()` time), and returns the statistics from `firstSent` on.
 */
export async function awaitDeliveries(
  receiver: WebhookReceiver,
  sentAt: ReadonlyMap<string, number>,
  firstSent: number,
  deadline: number,
): Promise<WebhookStats> {
  const missing = new Set(sentAt.keys());
  while (Date.now() < deadline) {
    for (const session of missing) if (receiver.arrivals.get(session)?.size) missing.delete(session);
    if (missing.size === 0) break;
    await sleep(POLL_MS);
  }
  return webhookStats(receiver, sentAt, firstSent, Math.min(Date.now(), deadline));
}
