/**
 * Credit pipeline: signed `payment.received` webhooks through the local gateway, SQS, the poller and
 * the real consumer, until every credit is visible, and on to each payment's event at its merchant's
 * webhook endpoint; and its baseline, raw `TransactWriteItems` of the same shape as a credit.
 * Imported once the environment points at the benchmark's local stack (the shared modules read it).
 */
import { randomUUID } from 'node:crypto';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
import { tableName } from '#shared/aws/clients.ts';
import { PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';
import { EVENTS_STREAM } from '#shared/definitions/streams.ts';
import type { LedgerEntry } from '#shared/ledger/ledger.ts';
import { createEndpoint } from '#shared/merchant-webhooks/endpoints.ts';
import { onboardMerchant } from '#shared/merchants/onboard.ts';
import type { Merchant } from '#shared/merchants/store.ts';
import { creditedPaymentItems, paymentEntryId } from '#shared/payments/credit.ts';
import {
  type BatchSizes,
  type BatchSummary,
  type CommandCounter,
  type CommandCounts,
  describeBatches,
  describeCounts,
  summarizeBatches,
} from './diagnostics.ts';
import { mergeSamples, perSecond, type Samples } from './http.ts';
import { type LatencySummary, mapPool, sleep, summarize } from './stats.ts';
import { awaitDeliveries, startReceiver, type WebhookReceiver, type WebhookStats } from './webhooks.ts';

/** A merchant payments are sent to: its id and its wallet's account number (what the consumer credits). */
export interface Payee {
  merchantId: string;
  accountNumber: string;
}

export interface PipelineOptions {
  /** The gateway's webhook URL and the secret the service verifies. */
  webhookUrl: string;
  webhookSecret: string;
  payees: readonly Payee[];
  /** The endpoint every payee has registered: each payment's event is awaited there too. */
  receiver: WebhookReceiver;
  payments: number;
  concurrency: number;
  /** Stops sending after this long (the rest is reported as not sent). */
  maxSendMs: number;
  /** Stops waiting for credits, and then for their events, this long after the last webhook was answered. */
  maxWaitMs: number;
}

export interface PipelineResult {
  sent: number;
  /** Webhooks the service answered 200 to: the credits expected. */
  accepted: number;
  /** Credits visible (their ledger entries) when the wait ended. */
  credited: number;
  complete: boolean;
  /** First webhook sent → last webhook answered. */
  intakeMs: number;
  /** First webhook sent → the balance read that showed every credit. */
  elapsedMs: number;
  creditPerSecond: number;
  /** Per payment: ledger entry `created_at` − the time its webhook was sent. */
  latency: LatencySummary;
  /** Balances above what was paid in: must be 0 (a credit applied twice). */
  overCredited: number;
  /** The same payments' events at the merchants' endpoint, timed from the same first webhook. */
  webhooks: WebhookStats;
}

const BATCH_GET_KEYS = 100;
const POLL_MS = 50;

function describeWebhooks(stats: WebhookStats): string {
  return (
    `${stats.deliveredPerSecond.toFixed(1)} events delivered/s (${stats.delivered}/${stats.expected}); ` +
    `webhook→endpoint p50 ${stats.latency.p50} ms, p99 ${stats.latency.p99} ms`
  );
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) =>
    items.slice(i * size, (i + 1) * size),
  );
}

/** BatchGet of many keys of one table, unprocessed keys retried a bounded number of times. */
async function batchGet<T>(
  client: DynamoDBDocumentClient,
  table: string,
  keys: readonly Record<string, string>[],
): Promise<T[]> {
  const items: T[] = [];
  for (const chunk of chunks(keys, BATCH_GET_KEYS)) {
    let pending: Record<string, unknown>[] = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= 20) throw new Error(`BatchGet on ${table} left keys unprocessed 20 times`);
      const { Responses, UnprocessedKeys } = await client.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
      );
      items.push(...((Responses?.[table] ?? []) as T[]));
      pending = (UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
      if (pending.length > 0) await sleep(10 * (attempt + 1));
    }
  }
  return items;
}

async function balances(
  client: DynamoDBDocumentClient,
  merchantIds: readonly string[],
): Promise<Map<string, number>> {
  const items = await batchGet<Pick<Merchant, 'merchant_id' | 'balance'>>(
    client,
    tableName('merchants'),
    merchantIds.map((merchant_id) => ({ merchant_id })),
  );
  return new Map(items.map((item) => [item.merchant_id, Number(item.balance)]));
}

/**
 * Sends `payments` signed webhooks spread round-robin over `payees`, `concurrency` at a time, then
 * waits until every accepted payment is credited (balances polled every 50 ms) and its event has
 * reached the endpoint, and reads each payment's ledger entry for its latency.
 */
export async function runCreditPipeline(
  client: DynamoDBDocumentClient,
  options: PipelineOptions,
): Promise<PipelineResult> {
  const merchantIds = [...new Set(options.payees.map((payee) => payee.merchantId))];
  const before = await balances(client, merchantIds);
  const plan = Array.from({ length: options.payments }, (_, i) => {
    const payee = options.payees[i % options.payees.length] as Payee;
    return { payee, amount: 10_000 + (i % 97), sessionId: nipSessionId() };
  });
  const sentAt = new Map<string, number>();
  const expected = new Map(before);
  let firstSent = Number.POSITIVE_INFINITY;
  let lastAnswered = 0;
  let sent = 0;
  const sendDeadline = Date.now() + options.maxSendMs;
  await mapPool(plan, options.concurrency, async ({ payee, amount, sessionId }) => {
    if (Date.now() > sendDeadline) return;
    const event = paymentEvent({ account_number: payee.accountNumber, amount, session_id: sessionId });
    const at = Date.now();
    firstSent = Math.min(firstSent, at);
    sent++;
    const { status } = await deliverWebhook(options.webhookUrl, options.webhookSecret, event).catch(() => ({
      status: 0,
    }));
    lastAnswered = Math.max(lastAnswered, Date.now());
    if (status !== 200) return;
    sentAt.set(sessionId, at);
    expected.set(payee.merchantId, (expected.get(payee.merchantId) ?? 0) + amount);
  });

  if (sent === 0) throw new Error('bench: no webhook was sent');

  // Done when every balance shows what was paid in; the wait is bounded.
  let doneAt: number | undefined;
  let overCredited = 0;
  const waitDeadline = lastAnswered + options.maxWaitMs;
  while (doneAt === undefined && Date.now() < waitDeadline) {
    const now = await balances(client, merchantIds);
    const readAt = Date.now();
    const short = merchantIds.filter((id) => (now.get(id) ?? 0) < (expected.get(id) ?? 0));
    overCredited = merchantIds.filter((id) => (now.get(id) ?? 0) > (expected.get(id) ?? 0)).length;
    if (short.length === 0) doneAt = readAt;
    else await sleep(POLL_MS);
  }
  // Events arrive from the credits on (the receiver notes the times): only the wait comes after.
  const webhooks = await awaitDeliveries(options.receiver, sentAt, firstSent, waitDeadline);

  const sessionOfEntry = new Map(
    [...sentAt.keys()].map((sessionId) => [
      paymentEntryId({ partner: 'sandbox', payment_id: sessionId }),
      sessionId,
    ]),
  );
  const entries = await batchGet<LedgerEntry>(
    client,
    tableName('ledgerEntries'),
    [...sessionOfEntry.keys()].map((entry_id) => ({ entry_id })),
  );
  const latencies = entries.map(
    (entry) =>
      Date.parse(entry.created_at) - (sentAt.get(sessionOfEntry.get(entry.entry_id) ?? '') ?? Number.NaN),
  );
  const elapsedMs = (doneAt ?? Date.now()) - firstSent;
  return {
    sent,
    accepted: sentAt.size,
    credited: entries.length,
    complete: doneAt !== undefined,
    intakeMs: lastAnswered - firstSent,
    elapsedMs,
    creditPerSecond: entries.length / (elapsedMs / 1000),
    latency: summarize(latencies),
    overCredited,
    webhooks,
  };
}

export interface RawOptions {
  shape: RawShape;
  merchants: number;
  transactions: number;
  concurrency: number;
  maxMs: number;
}

/** Committed transactions' latencies (ms), failures and wall time: the same shape as HTTP samples. */
export type RawResult = Samples;

const RAW_SENDER = { account_name: 'ADEBAYO CHIOMA', account_number: '0123456789', bank_code: '058' };

/** A received payment as the consumer sees it, for a raw transaction of a credit's shape. */
function rawPayment(
  paymentId: string,
  amount: number,
  at: string,
): Parameters<typeof creditedPaymentItems>[1] {
  return {
    type: 'PaymentReceived',
    partner: 'sandbox',
    payment_id: paymentId,
    account_ids: [],
    account_number: null,
    amount,
    sender: RAW_SENDER,
    narration: 'Transfer from customer',
    paid_at: at,
    delivery_id: paymentId,
    received_at: at,
  };
}

/**
 * What a raw transaction writes besides the balance update and the ledger entry: `credit`, what a
 * credited payment writes (its transaction record and its `payment.received` event, built by the
 * consumer's own `creditedPaymentItems`); `ledger`, the record alone (the shape before events).
 */
export type RawShape = 'credit' | 'ledger';

/**
 * The credit's own write, alone: one TransactWriteItems per payment with the balance update pinned
 * to the version, the entry put with attribute_not_exists and what `shape` adds, on bench-only
 * merchants and keys. Each merchant is in at most one transaction at a time and its version is
 * tracked here, so no transaction conflicts and no read is needed: the ceiling of what the
 * pipeline could reach one credit per transaction.
 */
export async function rawTransactions(
  client: DynamoDBDocumentClient,
  options: RawOptions,
): Promise<RawResult> {
  if (options.merchants < options.concurrency) throw new Error('bench: fewer raw merchants than workers');
  const run = randomUUID().slice(0, 8);
  const idle = Array.from({ length: options.merchants }, (_, i) => ({
    merchantId: `mer_benchraw_${run}_${i}`,
    balance: 0,
    version: 0,
  }));
  for (const merchant of idle) {
    const now = new Date().toISOString();
    await client.send(
      new PutCommand({
        TableName: tableName('merchants'),
        Item: {
          merchant_id: merchant.merchantId,
          name: 'bench raw',
          account_number: '0000000000',
          account_name: 'BENCH RAW',
          bank_code: '101',
          balance: 0,
          version: 0,
          created_at: now,
          updated_at: now,
        },
      }),
    );
  }
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + options.maxMs;
  const worker = async () => {
    while (issued < options.transactions && performance.now() < deadline) {
      const merchant = idle.shift();
      if (!merchant) throw new Error('bench: no idle raw merchant');
      issued++;
      const amount = 10_000 + (issued % 97);
      const entryId = paymentEntryId({ partner: 'sandbox', payment_id: `raw-${run}-${issued}` });
      const now = new Date().toISOString();
      const entry: LedgerEntry = {
        entry_id: entryId,
        merchant_id: merchant.merchantId,
        seq: merchant.version + 1,
        amount,
        balance_after: merchant.balance + amount,
        category: 'payment',
        reference: entryId,
        created_at: now,
      };
      const [record, event] = creditedPaymentItems(entry, rawPayment(entryId, amount, now), {
        reference: entryId,
        virtualAccount: null,
      });
      const companions = options.shape === 'credit' ? [record, event] : [record];
      const t0 = performance.now();
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName('merchants'),
                  Key: { merchant_id: merchant.merchantId },
                  // The ledger's own balance write (shared/ledger/ledger.ts), last entry time included.
                  UpdateExpression:
                    'SET balance = :after, version = :next, updated_at = :now, last_entry_at = :now',
                  ConditionExpression: 'version = :version',
                  ExpressionAttributeValues: {
                    ':after': entry.balance_after,
                    ':next': entry.seq,
                    ':version': merchant.version,
                    ':now': now,
                  },
                },
              },
              {
                Put: {
                  TableName: tableName('ledgerEntries'),
                  Item: entry,
                  ConditionExpression: 'attribute_not_exists(entry_id)',
                },
              },
              ...companions,
            ],
          }),
        );
        latencies.push(performance.now() - t0);
        merchant.balance = entry.balance_after;
        merchant.version = entry.seq;
      } catch {
        failures++;
      } finally {
        idle.push(merchant);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}

export interface PipelineSectionOptions {
  client: DynamoDBDocumentClient;
  webhookUrl: string;
  webhookSecret: string;
  merchants: number;
  payments: number;
  hotPayments: number;
  concurrency: number;
  /** The consumer's SQS batch size, for the report. */
  batchSize: number;
  /** Counts the consumer's DynamoDB calls (attached to the service's client). */
  counter: CommandCounter;
  /** The sizes of the batches the consumers were invoked with (the local runtime reports them). */
  batches: BatchSizes;
  progress: (message: string) => void;
}

export interface PipelineSection {
  merchants: number;
  concurrency: number;
  batchSize: number;
  spread: PipelineResult;
  /** Raw TransactWriteItems of a credit's shape, half before and half after the spread pipeline. */
  raw: Samples;
  /** The same of the ledger's shape (balance, entry, record; no event), for comparison. */
  rawLedger: Samples;
  hot: PipelineResult;
  /** The consumer's DynamoDB calls per credit (diagnostics). */
  spreadCalls: string;
  hotCalls: string;
  /** How the payment consumer's batches and ledger transactions ran in each run. */
  spreadBatches: ConsumerBatches;
  hotBatches: ConsumerBatches;
}

/** A run's payment-consumer batches, and how many credits each ledger transaction carried. */
export interface ConsumerBatches {
  consumer: BatchSummary;
  fanOut: BatchSummary;
  creditsPerTransaction: number;
}

/** The consumer of the events table's stream: the fan-out. */
const FAN_OUT_CONSUMER = EVENTS_STREAM.consumer;

function consumerBatches(
  sizes: Map<string, number[]>,
  counts: CommandCounts,
  credited: number,
): ConsumerBatches {
  const transactions = counts.TransactWriteItems?.calls ?? 0;
  return {
    consumer: summarizeBatches(sizes.get(PAYMENT_EVENTS_QUEUE.consumer) ?? []),
    fanOut: summarizeBatches(sizes.get(FAN_OUT_CONSUMER) ?? []),
    creditsPerTransaction: transactions === 0 ? 0 : credited / transactions,
  };
}

const describeConsumer = (batches: ConsumerBatches) =>
  `payment consumer ${describeBatches(batches.consumer)}, ${batches.creditsPerTransaction.toFixed(2)} credits per ledger transaction; fan-out ${describeBatches(batches.fanOut)}`;

/**
 * Starts the merchants' webhook endpoint, then measures with it: see {@link pipelineRuns}.
 */
export async function measurePipeline(options: PipelineSectionOptions): Promise<PipelineSection> {
  const receiver = await startReceiver();
  try {
    return await pipelineRuns(options, receiver);
  } finally {
    await receiver.close();
  }
}

/**
 * Onboards the merchants, each with an endpoint at `receiver` for `payment.received`, then: raw
 * transactions (half), a warm-up, the pipeline spread over every merchant, raw transactions (the
 * other half), and the pipeline with every payment to one merchant.
 */
async function pipelineRuns(
  options: PipelineSectionOptions,
  receiver: WebhookReceiver,
): Promise<PipelineSection> {
  const { client, concurrency, counter, batches, progress } = options;
  progress(`onboarding ${options.merchants} merchants and a hot one, each with a webhook endpoint`);
  const payees: Payee[] = [];
  for (let i = 0; i <= options.merchants; i++) {
    const { merchant } = await onboardMerchant(
      i < options.merchants ? `Bench Merchant ${i}` : 'Bench Hot Ltd',
    );
    await createEndpoint(merchant.merchant_id, { url: receiver.url, events: ['payment.received'] });
    payees.push({ merchantId: merchant.merchant_id, accountNumber: merchant.account_number });
  }
  const hotPayee = payees.pop() as Payee;
  const run = (payeeList: readonly Payee[], payments: number) =>
    runCreditPipeline(client, {
      webhookUrl: options.webhookUrl,
      webhookSecret: options.webhookSecret,
      payees: payeeList,
      receiver,
      payments,
      concurrency,
      maxSendMs: 60_000,
      maxWaitMs: 90_000,
    });
  const raw = (shape: RawShape, transactions: number) =>
    rawTransactions(client, {
      shape,
      merchants: options.merchants,
      transactions,
      concurrency,
      maxMs: 45_000,
    });
  const half = Math.ceil(options.payments / 2);
  /** Both raw shapes, `half` transactions each. */
  const raws = async (again: string) => {
    progress(`raw TransactWriteItems x${half} of a credit's shape${again}, ${concurrency} in flight`);
    const credit = await raw('credit', half);
    progress(`  ${perSecond(credit).toFixed(1)} tx/s`);
    progress(`raw TransactWriteItems x${half} of the ledger's shape (no event)${again}`);
    const ledger = await raw('ledger', half);
    progress(`  ${perSecond(ledger).toFixed(1)} tx/s`);
    return { credit, ledger };
  };

  await raw('credit', 100); // a warm-up
  const rawBefore = await raws('');

  progress('warming up the webhook, the consumer and the event deliveries (100 payments)');
  await run(payees, 100);
  progress(`credit pipeline: ${options.payments} webhooks over ${payees.length} merchants`);
  counter.take();
  batches.take();
  const spread = await run(payees, options.payments);
  const spreadCounts = counter.take();
  const spreadCalls = describeCounts(spreadCounts, Math.max(1, spread.credited));
  const spreadBatches = consumerBatches(batches.take(), spreadCounts, spread.credited);
  progress(`  ${spread.creditPerSecond.toFixed(1)} credits/s; per credit: ${spreadCalls}`);
  progress(`  ${describeConsumer(spreadBatches)}`);
  progress(`  ${describeWebhooks(spread.webhooks)}`);

  const rawAfter = await raws(' again');

  progress(`hot merchant: ${options.hotPayments} webhooks to one merchant`);
  counter.take();
  batches.take();
  const hot = await run([hotPayee], options.hotPayments);
  const hotCounts = counter.take();
  const hotCalls = describeCounts(hotCounts, Math.max(1, hot.credited));
  const hotBatches = consumerBatches(batches.take(), hotCounts, hot.credited);
  progress(`  ${hot.creditPerSecond.toFixed(1)} credits/s; per credit: ${hotCalls}`);
  progress(`  ${describeConsumer(hotBatches)}`);
  progress(`  ${describeWebhooks(hot.webhooks)}`);

  for (const [label, result] of Object.entries({ spread, hot })) {
    if (!result.complete || result.overCredited > 0 || result.accepted !== result.sent) {
      progress(
        `WARNING: ${label}: sent ${result.sent}, accepted ${result.accepted}, credited ${result.credited}, ` +
          `merchants over-credited ${result.overCredited}`,
      );
    }
    if (!result.webhooks.complete || result.webhooks.delivered !== result.webhooks.expected) {
      progress(
        `WARNING: ${label}: ${result.webhooks.delivered} distinct events delivered for ` +
          `${result.webhooks.expected} payments${result.webhooks.complete ? '' : ' (wait ended)'}`,
      );
    }
  }
  return {
    merchants: payees.length,
    concurrency,
    batchSize: options.batchSize,
    spread,
    raw: mergeSamples([rawBefore.credit, rawAfter.credit]),
    rawLedger: mergeSamples([rawBefore.ledger, rawAfter.ledger]),
    hot,
    spreadCalls,
    hotCalls,
    spreadBatches,
    hotBatches,
  };
}
