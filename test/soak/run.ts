/**
 * `npm run soak [-- --seconds 60] [-- --concurrency 12] [-- --merchants 4]`: mixed traffic at the
 * local maximum against a local stack this process starts exactly as the test suite's global setup
 * does (free ports, DynamoDB Local in memory, local SQS, the sandbox partner, the gateway and the
 * queue poller) and stops again. Then it waits for the queue to drain, audits every merchant's
 * ledger, checks every balance against what the traffic should have left, and prints a summary.
 * Exit code 1 if any check fails. Only 127.0.0.1; every loop is bounded by time or count.
 *
 * Rate limit: the gateway runs with a per-key limit of 1,000,000 per minute instead of 100. The soak
 * drives the money paths as hard as the machine allows; under the real limit its few keys would be
 * answered 429 after 100 requests each. The limiter has tests of its own (unit and e2e); 429s are
 * still counted here, apart from errors.
 */
import { randomBytes, randomInt } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { freePort, localCredentials } from '#infra/local/process.ts';
import { startRuntime } from '#infra/local/runtime.ts';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
import { startLocalServices } from '#infra/local/services.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { deadLetterQueueName, PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '12' },
    merchants: { type: 'string', default: '4' },
  },
});
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const MERCHANTS = Number(args.merchants);
for (const [name, value, max] of [
  ['--seconds', SECONDS, 3_600],
  ['--concurrency', CONCURRENCY, 256],
  ['--merchants', MERCHANTS, 100],
] as const) {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`${name} must be a whole number from 1 to ${max}`);
    process.exit(2);
  }
}
/** Past this the run stops everything and fails: traffic, drain and checks all included. */
const HARD_LIMIT_MS = SECONDS * 1000 + 5 * 60_000;
const SETTLE_AFTER_MS = 500;
const started = performance.now();
const progress = (message: string) =>
  process.stderr.write(`[soak ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

// ---------------------------------------------------------------------------------------------------
// Bookkeeping: what every request answered, and what the traffic should have done to each balance
// ---------------------------------------------------------------------------------------------------

interface SoakMerchant {
  merchantId: string;
  walletNumber: string;
  headers: Record<string, string>;
  /** Partner session id -> amount: each credited once, however often delivered. */
  payments: Map<string, number>;
  /** Transfer reference -> the body sent, and amount + fee if it was debited (a 201). */
  transfers: Map<string, { body: Record<string, unknown>; debit: number; first: string }>;
  beneficiaries: string[];
  sessions: string[];
  virtualAccounts: { reference: string; accountNumber: string }[];
}

const statuses = new Map<number, number>();
/** Response times (ms) by operation. */
const latencies = new Map<string, number[]>();
const byOperation = new Map<string, Map<number, number>>();
const errors: string[] = [];
let errorCount = 0;
let rateLimited = 0;
let requests = 0;

function timed(operation: string, sent: number) {
  const list = latencies.get(operation) ?? [];
  list.push(performance.now() - sent);
  latencies.set(operation, list);
}

/** `p50/p99 ms` of an operation's response times. */
function percentiles(operation: string): string {
  const sorted = [...(latencies.get(operation) ?? [])].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return sorted.length ? `p50 ${at(0.5).toFixed(0)} ms, p99 ${at(0.99).toFixed(0)} ms` : '';
}

function unexpected(detail: string) {
  errorCount += 1;
  if (errors.length < 20) errors.push(detail);
}

function record(operation: string, status: number, expected: readonly number[], detail: () => string) {
  requests += 1;
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const mine = byOperation.get(operation) ?? new Map<number, number>();
  mine.set(status, (mine.get(status) ?? 0) + 1);
  byOperation.set(operation, mine);
  if (status === 429) {
    rateLimited += 1;
    return;
  }
  if (!expected.includes(status)) unexpected(`${operation} → ${status}: ${detail()}`);
}

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;
const reference = () => `soak-${randomBytes(6).toString('hex')}`;
/**
 * A NUBAN at `bank` whose serial starts with `prefix`: a sandbox trigger, or a plain account (`12`:
 * no sandbox or stand-in trigger begins so, where a serial beginning `1` could begin `11111`).
 */
const account = (bank: string, prefix = '12') =>
  toNuban(bank, `${prefix}${String(randomInt(10 ** (9 - prefix.length))).padStart(9 - prefix.length, '0')}`);

// ---------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const gatewayPort = await freePort();
  progress('starting DynamoDB Local (in memory), local SQS and the sandbox partner');
  const services = await startLocalServices({
    ports: { dynamodb: await freePort(), sqs: await freePort(), sandbox: await freePort() },
    tablePrefix: 'soak-',
    sandbox: {
      hangMs: 3000,
      webhookUrl: `http://127.0.0.1:${gatewayPort}/webhooks/payments`,
      webhookSecret,
      settleAfterMs: SETTLE_AFTER_MS,
    },
  });
  const stops: (() => Promise<void>)[] = [services.stop];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
  };
  const onSignal = () => {
    progress('interrupted: stopping everything');
    void stopAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const watchdog = setTimeout(() => {
    console.error(`soak: still running after ${HARD_LIMIT_MS / 1000} s: stopping everything, failing`);
    void stopAll().then(() => process.exit(1));
  }, HARD_LIMIT_MS);
  watchdog.unref();

  try {
    // Handlers read their configuration from the environment at import, as on Lambda.
    Object.assign(process.env, services.env, {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'SILENT',
      PARTNER_TIMEOUT_MS: '2000',
      API_KEY_PEPPER: randomBytes(32).toString('hex'),
      PARTNER_WEBHOOK_SECRET: webhookSecret,
    });
    let pollerErrors = 0;
    const { gateway, stop } = await startRuntime({
      port: gatewayPort,
      rootDir: ROOT,
      env: services.env,
      rateLimit: { requests: 1_000_000, windowSeconds: 60 },
      onPollerError: (error) => {
        pollerErrors += 1;
        if (pollerErrors <= 3) progress(`queue poller: ${String(error)}`);
      },
    });
    stops.push(stop);
    return await soak(gateway.url, webhookSecret, services.env, () => pollerErrors);
  } finally {
    progress('stopping the gateway, the poller, the sandbox, SQS and DynamoDB Local');
    await stopAll();
    clearTimeout(watchdog);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function soak(
  baseUrl: string,
  webhookSecret: string,
  env: Record<string, string>,
  pollerErrors: () => number,
): Promise<number> {
  // Imported only now: the shared modules read the environment set above when they load.
  const [{ onboardMerchant }, { auditMerchant }, { getMerchant }, { getTransaction }, { dynamo, tableName }] =
    await Promise.all([
      import('#shared/merchants/onboard.ts'),
      import('#shared/ledger/audit.ts'),
      import('#shared/merchants/store.ts'),
      import('#shared/transactions/store.ts'),
      import('#shared/aws/clients.ts'),
    ]);

  const api = async (
    operation: string,
    m: SoakMerchant,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    expected: readonly number[],
    body?: Record<string, unknown>,
  ): Promise<{ status: number; json: Record<string, unknown> | undefined }> => {
    const sent = performance.now();
    try {
      const response = await fetch(`${baseUrl}${pathAndQuery}`, {
        method,
        headers: { ...m.headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      timed(operation, sent);
      record(operation, response.status, expected, () => `${method} ${pathAndQuery} ${text.slice(0, 200)}`);
      return {
        status: response.status,
        json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
      };
    } catch (error) {
      record(operation, 0, expected, () => `${method} ${pathAndQuery} ${String(error)}`);
      return { status: 0, json: undefined };
    }
  };
  const webhook = async (operation: string, event: { type: string; data: Record<string, unknown> }) => {
    const sent = performance.now();
    try {
      const { status, body } = await deliverWebhook(`${baseUrl}/webhooks/payments`, webhookSecret, event);
      timed(operation, sent);
      record(operation, status, [200], () => body.slice(0, 200));
      return status;
    } catch (error) {
      record(operation, 0, [200], () => String(error));
      return 0;
    }
  };
  const dataOf = <T>(response: { json: Record<string, unknown> | undefined }) => response.json?.data as T;

  /** A payment into `accountNumber` for `m`; once in a while delivered twice, as partners do. */
  const payInto = async (m: SoakMerchant, accountNumber: string, amount: number) => {
    const sessionId = nipSessionId();
    const event = paymentEvent({ account_number: accountNumber, amount, session_id: sessionId });
    // Accepted once is credited once, whichever delivery it was.
    if ((await webhook('payment webhook', event)) === 200) m.payments.set(sessionId, amount);
    if (randomInt(5) === 0 && (await webhook('payment redelivery', event)) === 200) {
      m.payments.set(sessionId, amount);
    }
  };

  progress(`creating ${MERCHANTS} merchants, each funded by a signed payment into its wallet`);
  const merchants: SoakMerchant[] = [];
  for (let i = 0; i < MERCHANTS; i++) {
    const { merchant, key, apiSecret } = await onboardMerchant(`Soak Merchant ${i + 1}`);
    merchants.push({
      merchantId: merchant.merchant_id,
      walletNumber: merchant.account_number,
      headers: { 'X-API-Key': key.api_key, 'X-API-Secret': apiSecret },
      payments: new Map(),
      transfers: new Map(),
      beneficiaries: [],
      sessions: [],
      virtualAccounts: [],
    });
  }
  for (const m of merchants) await payInto(m, m.walletNumber, 5_000_000);

  const operations: [weight: number, name: string, run: (m: SoakMerchant) => Promise<void>][] = [
    [10, 'balance', async (m) => void (await api('balance', m, 'GET', '/balance', [200]))],
    [
      8,
      'validate-account',
      async (m) => {
        const missing = randomInt(6) === 0;
        const response = await api(
          'validate-account',
          m,
          'POST',
          '/validate-account',
          missing ? [422] : [200],
          {
            account_number: account('058', missing ? '99999' : '1'),
            bank_code: '058',
          },
        );
        const session = dataOf<{ session_id?: string }>(response)?.session_id;
        if (session) m.sessions.push(session);
      },
    ],
    [
      5,
      'create-beneficiary',
      async (m) => {
        const body =
          m.sessions.length > 0 && randomInt(2) === 0
            ? { session_id: pick(m.sessions) }
            : { account_number: account('044'), bank_code: '044' };
        const saved = await api('create-beneficiary', m, 'POST', '/beneficiaries', [200, 201], body);
        const id = dataOf<{ id?: string }>(saved)?.id;
        if (id && !m.beneficiaries.includes(id)) m.beneficiaries.push(id);
      },
    ],
    [
      4,
      'list-beneficiaries',
      async (m) => {
        const first = await api('list-beneficiaries', m, 'GET', '/beneficiaries?limit=5', [200]);
        const cursor = (first.json?.meta as { next_cursor?: string | null } | undefined)?.next_cursor;
        if (cursor)
          await api('list-beneficiaries', m, 'GET', `/beneficiaries?limit=5&cursor=${cursor}`, [200]);
      },
    ],
    [
      12,
      'create-transfer',
      async (m) => {
        const retry = m.transfers.size > 0 && randomInt(8) === 0;
        let ref: string;
        let body: Record<string, unknown>;
        if (retry) {
          ref = pick([...m.transfers.keys()]);
          body = m.transfers.get(ref)?.body ?? {};
        } else {
          ref = reference();
          const destination = randomInt(10);
          const target =
            destination < 2 && m.beneficiaries.length > 0
              ? { beneficiary_id: pick(m.beneficiaries) }
              : destination < 3 && m.sessions.length > 0
                ? { session_id: pick(m.sessions) }
                : {
                    // Plain accounts succeed; 77777 is refused (failed + reversal); 66666 stays
                    // pending until the sandbox's transfer.success webhook settles it.
                    account_number: account('011', pick(['12', '12', '12', '77777', '66666'])),
                    bank_code: '011',
                  };
          body = { reference: ref, amount: 100 + randomInt(30_000), ...target, narration: 'soak' };
        }
        const response = await api(
          'create-transfer',
          m,
          'POST',
          '/transfers',
          retry ? [200] : [201, 422],
          body,
        );
        if (response.status === 422 && response.json?.code !== 'insufficient_funds') {
          unexpected(`create-transfer → 422 ${JSON.stringify(response.json)}`);
        }
        if (response.status === 201) {
          const { amount, fee, status } = dataOf<{ amount: number; fee: number; status: string }>(response);
          m.transfers.set(ref, { body, debit: amount + fee, first: status });
        }
      },
    ],
    [
      4,
      'create-virtual-account',
      async (m) => {
        const ref = reference();
        const response = await api('create-virtual-account', m, 'POST', '/virtual-accounts', [201], {
          amount: 1_000 + randomInt(100_000),
          reference: ref,
        });
        const accountNumber = dataOf<{ account_number?: string }>(response)?.account_number;
        if (accountNumber) m.virtualAccounts.push({ reference: ref, accountNumber });
      },
    ],
    [
      10,
      'payment webhook',
      async (m) => {
        const into =
          m.virtualAccounts.length > 0 && randomInt(3) > 0
            ? pick(m.virtualAccounts).accountNumber
            : m.walletNumber;
        await payInto(m, into, 100 + randomInt(60_000));
      },
    ],
    [
      4,
      'get-payment',
      async (m) => {
        if (m.virtualAccounts.length === 0) return;
        await api('get-payment', m, 'GET', `/payments/${pick(m.virtualAccounts).reference}`, [200]);
      },
    ],
    [
      8,
      'history',
      async (m) => {
        const filter = pick([
          '',
          '&type=debit',
          '&type=credit',
          '&status=success',
          '&status=failed',
          '&status=pending',
        ]);
        const first = await api(
          'list-transactions',
          m,
          'GET',
          `/transactions?limit=${1 + randomInt(50)}${filter}`,
          [200],
        );
        const cursor = (first.json?.meta as { next_cursor?: string | null } | undefined)?.next_cursor;
        if (cursor)
          await api('list-transactions', m, 'GET', `/transactions?limit=20${filter}&cursor=${cursor}`, [200]);
        if (m.transfers.size > 0) {
          await api('get-transaction', m, 'GET', `/transactions/${pick([...m.transfers.keys()])}`, [200]);
        }
      },
    ],
  ];
  const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
  const choose = () => {
    let roll = randomInt(totalWeight);
    for (const operation of operations) {
      roll -= operation[0];
      if (roll < 0) return operation;
    }
    return operations[0] as (typeof operations)[number];
  };

  progress(`mixed traffic for ${SECONDS} s, ${CONCURRENCY} at a time, on ${baseUrl}`);
  const deadline = Date.now() + SECONDS * 1000;
  let lastReport = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_worker, i) => {
      while (Date.now() < deadline) {
        const [, , run] = choose();
        await run(merchants[(i + randomInt(MERCHANTS)) % MERCHANTS] as SoakMerchant);
        if (i === 0 && Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          progress(`${requests} requests, ${errorCount} errors`);
        }
      }
    }),
  );
  const trafficSeconds = (SECONDS * 1000 + Date.now() - deadline) / 1000;

  // Drain: the sandbox settles pending transfers by webhook after SETTLE_AFTER_MS; then the queue
  // must empty (nothing visible, nothing in flight) and stay empty.
  progress('traffic stopped; waiting for the sandbox to settle and the queue to drain');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_AFTER_MS + 1_000));
  const sqs = new SQSClient({
    endpoint: env.SQS_ENDPOINT,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  const depth = async (queueUrl: string) => {
    const { Attributes: a } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(a?.ApproximateNumberOfMessages ?? 0) + Number(a?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  };
  const queueUrl = env.PAYMENTS_QUEUE_URL ?? '';
  const { QueueUrl: dlqUrl = '' } = await sqs.send(
    new GetQueueUrlCommand({ QueueName: `soak-${deadLetterQueueName(PAYMENT_EVENTS_QUEUE)}` }),
  );
  let drained = false;
  let emptyReads = 0;
  const drainDeadline = Date.now() + 120_000;
  while (Date.now() < drainDeadline) {
    emptyReads = (await depth(queueUrl)) === 0 ? emptyReads + 1 : 0;
    if (emptyReads >= 3) {
      drained = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const deadLettered = await depth(dlqUrl);
  sqs.destroy();

  // Checks: every ledger sound; every balance what the traffic should have left; nothing pending.
  progress('auditing every merchant');
  const problems: string[] = [];
  if (!drained) problems.push('the payment events queue did not drain within 120 s');
  if (deadLettered > 0) problems.push(`${deadLettered} messages in the dead-letter queue`);
  if (errorCount > 0) problems.push(`${errorCount} responses other than the expected ones (429s aside)`);
  if (pollerErrors() > 0) problems.push(`${pollerErrors()} queue poller errors`);
  const audits: string[] = [];
  let pendingLeft = 0;
  /** `<status when created> → <status now>`: how transfers ended. */
  const outcomes = new Map<string, number>();
  for (const m of merchants) {
    const report = await auditMerchant(m.merchantId);
    let debits = 0;
    for (const [ref, { debit, first }] of m.transfers) {
      const transfer = await getTransaction(m.merchantId, ref);
      const outcome = `${first} → ${transfer?.status}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      if (transfer?.status === 'pending') pendingLeft += 1;
      if (transfer?.status === 'success' || transfer?.status === 'pending') debits += debit;
      else if (transfer?.status !== 'failed')
        problems.push(`${m.merchantId}: transfer ${ref} is ${transfer?.status}`);
    }
    const credits = [...m.payments.values()].reduce((sum, amount) => sum + amount, 0);
    const expected = credits - debits;
    const balance = (await getMerchant(m.merchantId))?.balance;
    audits.push(
      `  ${m.merchantId}: balance ${balance} (expected ${expected}: ${m.payments.size} payments ${credits}, ` +
        `${m.transfers.size} transfers ${debits}), ${report.entries} entries, ` +
        `${report.problems.length === 0 ? 'audit clean' : `PROBLEMS: ${report.problems.join('; ')}`}`,
    );
    problems.push(...report.problems.map((problem) => `${m.merchantId}: ${problem}`));
    if (balance !== expected) problems.push(`${m.merchantId}: balance ${balance}, expected ${expected}`);
  }
  if (pendingLeft > 0) problems.push(`${pendingLeft} transfers still pending after the drain`);
  const unmatched = await dynamo.send(
    new ScanCommand({ TableName: tableName('unmatchedPayments'), Select: 'COUNT' }),
  );
  if ((unmatched.Count ?? 0) > 0) problems.push(`${unmatched.Count} unmatched payments`);

  const line = (counts: Map<number, number>) =>
    [...counts]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status === 0 ? 'network-error' : status}×${n}`)
      .join(' ');
  console.log(
    [
      '',
      `Soak summary: ${requests} requests in ${trafficSeconds.toFixed(1)} s (${(requests / trafficSeconds).toFixed(0)}/s), ` +
        `${CONCURRENCY} concurrent, ${MERCHANTS} merchants; gateway rate limit raised to 1,000,000/min (see test/soak/run.ts)`,
      `  by status: ${line(statuses)}`,
      ...[...byOperation]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([operation, counts]) => `    ${operation}: ${line(counts)} (${percentiles(operation)})`),
      `  429 rate limited: ${rateLimited}`,
      `  errors other than 429: ${errorCount}${errors.length ? `\n    ${errors.join('\n    ')}` : ''}`,
      `  queue drained: ${drained ? 'yes' : 'NO'}; dead-lettered: ${deadLettered}; poller errors: ${pollerErrors()}`,
      `  transfers (when answered → now): ${[...outcomes].map(([outcome, n]) => `${outcome} ×${n}`).join(', ')}`,
      `  transfers still pending: ${pendingLeft}; unmatched payments: ${unmatched.Count ?? 0}`,
      `  audits (${merchants.length} merchants):`,
      ...audits,
      problems.length === 0 ? 'RESULT: PASS' : `RESULT: FAIL\n  ${problems.join('\n  ')}`,
    ].join('\n'),
  );
  return problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('soak failed:', error);
    process.exit(1);
  },
);
