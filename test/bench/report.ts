/** What `npm run bench` prints: markdown tables for people, one JSON line (with `--json`) for tools. */
import type { Bundle, ImportShare } from './bundles.ts';
import type { DashboardLoad } from './dashboard.ts';
import { describeBatches } from './diagnostics.ts';
import { type OverheadResult, perSecond, type Samples } from './http.ts';
import type { ConsumerBatches, PipelineResult, PipelineSection } from './pipeline.ts';
import { kb, markdownTable, percentile, round } from './stats.ts';

const CONCURRENCY_NOTE = "16 payers, one in flight each, against the credit section's raw TransactWriteItems";

/** The team's goals (the performance issue's table): reported next to the numbers, never asserted. */
export const GOALS = {
  bundleBytesMax: 400_000,
  importRatioMax: 1.2,
  balanceOverheadRatioMax: 1.3,
  creditThroughputRatioMin: 1.0,
  hotRatioMin: 1.5,
} as const;

/**
 * A bundle, its median import time, its import ÷ the baseline's (the median of adjacent pairs), and
 * where one profiled import's milliseconds went.
 */
export type MeasuredBundle = Bundle & { importMs: number; importRatio: number; importProfile: ImportShare[] };

export interface ColdStartResult {
  functions: MeasuredBundle[];
  baseline: MeasuredBundle;
  runs: number;
  /** The version of the node that imported the bundles (`--import-node`), e.g. `v20.20.2`. */
  node: string;
}

export interface BenchResults {
  coldStart: ColdStartResult;
  overhead: OverheadResult;
  pipeline: PipelineSection;
  /** `POST /transfers` through the gateway (debit, partner call, settlement). */
  transfers: Samples;
  /** The dashboard's first load in Chromium (absent if Chromium could not run). */
  dashboard?: DashboardLoad;
  /** 1-minute load average when the run started and ended: the machine may be shared. */
  loadAverage: { start: number; end: number };
  wallSeconds: number;
}

const p = (samples: Samples, q: number) => round(percentile(samples.latencies, q));

/** The JSON object of `--json`: the agreed field names first, extra detail after. */
export function toJson(results: BenchResults) {
  const { coldStart, overhead, pipeline } = results;
  const baselineMs = coldStart.baseline.importMs;
  const bundleBytesMax = Math.max(...coldStart.functions.map((f) => f.bytes));
  const importRatioMax = Math.max(...coldStart.functions.map((f) => f.importRatio));
  const balanceP50 = p(overhead.balance, 50);
  const getItemP50 = p(overhead.getItem, 50);
  const creditPerS = pipeline.spread.creditPerSecond;
  const rawPerS = perSecond(pipeline.raw);
  const hooks = pipeline.spread.webhooks;
  const json = {
    functions: coldStart.functions.map((f) => ({
      name: f.name,
      bytes: f.bytes,
      import_ms: round(f.importMs, 1),
      import_ratio: round(f.importRatio),
      import_profile: f.importProfile.slice(0, 6).map(({ input, ms }) => ({ input, ms: round(ms, 1) })),
    })),
    baseline_import_profile: coldStart.baseline.importProfile
      .slice(0, 6)
      .map(({ input, ms }) => ({ input, ms: round(ms, 1) })),
    baseline_import_ms: round(baselineMs, 1),
    bundle_bytes_max: bundleBytesMax,
    import_ratio_max: round(importRatioMax),
    balance_p50_ms: balanceP50,
    balance_p99_ms: p(overhead.balance, 99),
    getitem_p50_ms: getItemP50,
    balance_overhead_ratio: round(balanceP50 / getItemP50),
    credit_per_s: round(creditPerS, 1),
    webhook_to_credit_p50_ms: pipeline.spread.latency.p50,
    webhook_to_credit_p99_ms: pipeline.spread.latency.p99,
    raw_tx_per_s: round(rawPerS, 1),
    credit_throughput_ratio: round(creditPerS / rawPerS),
    raw_ledger_tx_per_s: round(perSecond(pipeline.rawLedger), 1),
    credit_vs_raw_ledger_ratio: round(creditPerS / perSecond(pipeline.rawLedger)),
    hot_credit_per_s: round(pipeline.hot.creditPerSecond, 1),
    hot_ratio: round(pipeline.hot.creditPerSecond / creditPerS),
    webhook_latency_p50_ms: hooks.latency.p50,
    webhook_latency_p99_ms: hooks.latency.p99,
    webhook_delivered_per_second: round(hooks.deliveredPerSecond, 1),
    webhook_vs_credit_ratio: round(hooks.deliveredPerSecond / creditPerS),
    webhook_delivered: hooks.delivered,
    webhook_expected: hooks.expected,
    transfer_per_s: round(perSecond(results.transfers), 1),
    transfer_p50_ms: p(results.transfers, 50),
    transfer_p99_ms: p(results.transfers, 99),
    transfer_failures: results.transfers.failures,
    transfer_throughput_ratio: round(perSecond(results.transfers) / rawPerS),
    dashboard_first_load_bytes: results.dashboard?.bytes ?? null,
    dashboard_interactive_ms: results.dashboard ? round(results.dashboard.interactiveMs, 1) : null,
    // Extra detail.
    baseline_bytes: coldStart.baseline.bytes,
    import_runs: coldStart.runs,
    import_node: coldStart.node,
    getitem_p99_ms: p(overhead.getItem, 99),
    balance_handler_p50_ms: p(overhead.handler, 50),
    balance_handler_getitem_p50_ms: p(overhead.handlerGetItem, 50),
    balance_handler_ratio: round(p(overhead.handler, 50) / p(overhead.handlerGetItem, 50)),
    bare_http_p50_ms: p(overhead.bare, 50),
    bare_http_getitem_ratio: round(p(overhead.bare, 50) / p(overhead.bareGetItem, 50)),
    balance_vs_bare_http_ratio: round(p(overhead.bareBalance, 50) / p(overhead.bare, 50)),
    balance_c16_p50_ms: p(overhead.balanceC16, 50),
    balance_c16_p99_ms: p(overhead.balanceC16, 99),
    balance_c16_rps: round(perSecond(overhead.balanceC16), 1),
    getitem_c16_p50_ms: p(overhead.getItemC16, 50),
    getitem_c16_p99_ms: p(overhead.getItemC16, 99),
    getitem_c16_rps: round(perSecond(overhead.getItemC16), 1),
    rate_limit_lifted_for_bench: true,
    payments: pipeline.spread.accepted,
    credits: pipeline.spread.credited,
    credits_complete: pipeline.spread.complete,
    merchants: pipeline.merchants,
    webhook_concurrency: pipeline.concurrency,
    hot_payments: pipeline.hot.accepted,
    hot_credits: pipeline.hot.credited,
    hot_complete: pipeline.hot.complete,
    hot_webhook_to_credit_p50_ms: pipeline.hot.latency.p50,
    hot_webhook_to_credit_p99_ms: pipeline.hot.latency.p99,
    raw_tx_p50_ms: p(pipeline.raw, 50),
    consumer_batch_size_mean: round(pipeline.spreadBatches.consumer.mean, 1),
    consumer_batch_size_p50: pipeline.spreadBatches.consumer.p50,
    credits_per_transaction: round(pipeline.spreadBatches.creditsPerTransaction),
    fan_out_batch_size_mean: round(pipeline.spreadBatches.fanOut.mean, 1),
    hot_consumer_batch_size_mean: round(pipeline.hotBatches.consumer.mean, 1),
    hot_credits_per_transaction: round(pipeline.hotBatches.creditsPerTransaction),
    webhook_complete: hooks.complete,
    webhook_repeats: hooks.repeats,
    hot_webhook_latency_p50_ms: pipeline.hot.webhooks.latency.p50,
    hot_webhook_latency_p99_ms: pipeline.hot.webhooks.latency.p99,
    hot_webhook_vs_credit_ratio: round(
      pipeline.hot.webhooks.deliveredPerSecond / pipeline.hot.creditPerSecond,
    ),
    load_average_1m: [round(results.loadAverage.start), round(results.loadAverage.end)],
    wall_s: round(results.wallSeconds, 1),
  };
  return { ...json, goals_missed: missedGoals(json) };
}

/** The headline numbers the goals are about. */
interface Headline {
  bundle_bytes_max: number;
  import_ratio_max: number;
  balance_overhead_ratio: number;
  credit_throughput_ratio: number;
  hot_ratio: number;
}

function goalRows(json: Headline): { goal: string; measured: string; met: boolean }[] {
  return [
    {
      goal: `every bundle ≤ ${kb(GOALS.bundleBytesMax)}`,
      measured: `max ${kb(json.bundle_bytes_max)}`,
      met: json.bundle_bytes_max <= GOALS.bundleBytesMax,
    },
    {
      goal: `import_ratio_max ≤ ${GOALS.importRatioMax}`,
      measured: String(json.import_ratio_max),
      met: json.import_ratio_max <= GOALS.importRatioMax,
    },
    {
      goal: `balance_overhead_ratio ≤ ${GOALS.balanceOverheadRatioMax}`,
      measured: String(json.balance_overhead_ratio),
      met: json.balance_overhead_ratio <= GOALS.balanceOverheadRatioMax,
    },
    {
      goal: `credit_throughput_ratio ≥ ${GOALS.creditThroughputRatioMin}`,
      measured: String(json.credit_throughput_ratio),
      met: json.credit_throughput_ratio >= GOALS.creditThroughputRatioMin,
    },
    {
      goal: `hot_ratio ≥ ${GOALS.hotRatioMin}`,
      measured: String(json.hot_ratio),
      met: json.hot_ratio >= GOALS.hotRatioMin,
    },
  ];
}

function missedGoals(json: Headline): string[] {
  return goalRows(json)
    .filter((row) => !row.met)
    .map((row) => row.goal);
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

const batchRow = (label: string, batches: ConsumerBatches) => [
  label,
  describeBatches(batches.consumer),
  batches.creditsPerTransaction.toFixed(2),
  describeBatches(batches.fanOut),
];

/** The human report: markdown, one table per measurement, the goals last. */
export function toMarkdown(results: BenchResults): string {
  const json = toJson(results);
  const { coldStart, overhead, pipeline } = results;
  const baselineBytes = new Map(coldStart.baseline.contents.map((c) => [c.input, c.bytes]));
  // What a bundle carries beyond the baseline's SDK: where its extra size comes from.
  const topInputs = (bundle: Bundle) =>
    bundle.contents
      .map((c) => ({ input: c.input, bytes: c.bytes - (baselineBytes.get(c.input) ?? 0) }))
      .filter((c) => c.bytes >= 1000)
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 6)
      .map((c) => `${c.input} +${kb(c.bytes)}`)
      .join(', ');
  // Where one profiled import's time went: its largest parts.
  const topShares = (bundle: MeasuredBundle) =>
    bundle.importProfile
      .slice(0, 5)
      .map(({ input, ms: spent }) => `${input} ${spent.toFixed(1)}`)
      .join(', ');
  const coldRow = (f: MeasuredBundle, name: string, inputs: string) => [
    name,
    kb(f.bytes),
    `${f.importMs.toFixed(1)} ms`,
    f.importRatio.toFixed(2),
    inputs,
    topShares(f),
  ];
  const coldRows = [
    ...coldStart.functions.map((f) => coldRow(f, f.name, topInputs(f))),
    coldRow(coldStart.baseline, 'baseline (lib-dynamodb GetItem)', 'the reference: AWS SDK only'),
  ];
  const load = (label: string, s: Samples) => [
    label,
    String(s.latencies.length),
    ms(percentile(s.latencies, 50)),
    ms(percentile(s.latencies, 99)),
    perSecond(s).toFixed(0),
    String(s.failures),
  ];
  const flow = (label: string, r: PipelineResult, calls: string) => [
    label,
    `${r.credited}/${r.accepted}${r.complete ? '' : ' (incomplete)'}`,
    `${(r.elapsedMs / 1000).toFixed(2)} s`,
    `${(r.accepted / (r.intakeMs / 1000)).toFixed(0)}/s`,
    `${r.creditPerSecond.toFixed(1)}/s`,
    ms(r.latency.p50),
    ms(r.latency.p99),
    calls,
  ];
  const events = (label: string, r: PipelineResult) => {
    const w = r.webhooks;
    return [
      label,
      `${w.delivered}/${w.expected}${w.complete ? '' : ' (incomplete)'}`,
      String(w.repeats),
      `${(w.elapsedMs / 1000).toFixed(2)} s`,
      `${w.deliveredPerSecond.toFixed(1)}/s`,
      `${r.creditPerSecond.toFixed(1)}/s`,
      (w.deliveredPerSecond / r.creditPerSecond).toFixed(2),
      ms(w.latency.p50),
      ms(w.latency.p99),
    ];
  };
  return [
    `## Cold start proxy (esbuild as infra/bundling.ts; median import of ${coldStart.runs} fresh node ${coldStart.node} processes; vs baseline: the median of ${coldStart.runs} ratios to a baseline import made next to it)`,
    '',
    markdownTable(
      [
        'function',
        'bundle',
        'import',
        'vs baseline',
        'largest additions over the baseline (esbuild metafile)',
        'ms of one profiled import, largest parts (node --cpu-prof, 100 µs samples)',
      ],
      coldRows,
    ),
    '',
    `## Request overhead (GET /balance via the local gateway vs one GetItem; gateway rate limit lifted to 1e9/min for the bench)`,
    '',
    markdownTable(
      ['measurement', 'requests', 'p50', 'p99', 'per s', 'failures'],
      [
        load('GET /balance, 1 connection', overhead.balance),
        load('GetItem, sequential', overhead.getItem),
        load(`GET /balance, ${overhead.concurrency} connections`, overhead.balanceC16),
        load(`GetItem, ${overhead.concurrency} in flight`, overhead.getItemC16),
        load('GET /balance handler called in-process (no HTTP, no gateway)', overhead.handler),
        load('GetItem, sequential, in the same rounds', overhead.handlerGetItem),
        load('GET /balance, 1 connection (third pass)', overhead.bareBalance),
        load('bare node:http handler making the same GetItem, in the same rounds', overhead.bare),
        load('GetItem, sequential, in the same rounds', overhead.bareGetItem),
      ],
    ),
    '',
    `## Credit pipeline (webhook → gateway → SQS → poller → consumer → ledger; ${pipeline.concurrency} webhooks in flight; the poller working on several batches of ${pipeline.batchSize} at once, as npm start runs it)`,
    '',
    markdownTable(
      [
        'run',
        'credited',
        'first sent → all visible',
        'webhook intake',
        'credits',
        'webhook→credit p50',
        'p99',
        'consumer DynamoDB calls per credit × mean duration',
      ],
      [
        flow(`${pipeline.merchants} merchants`, pipeline.spread, pipeline.spreadCalls),
        flow('1 hot merchant', pipeline.hot, pipeline.hotCalls),
      ],
    ),
    '',
    markdownTable(
      ['run', 'payment consumer batches', 'credits per ledger transaction', 'fan-out batches'],
      [
        batchRow(`${pipeline.merchants} merchants`, pipeline.spreadBatches),
        batchRow('1 hot merchant', pipeline.hotBatches),
      ],
    ),
    '',
    markdownTable(
      ['baseline', 'transactions', 'p50', 'p99', 'per s', 'failures'],
      [
        load(
          `raw TransactWriteItems of a credit's shape (balance, entry, record, event: 4 items), ${pipeline.concurrency} in flight: the ratio's baseline`,
          pipeline.raw,
        ),
        load(
          `raw TransactWriteItems of the ledger's shape (balance, entry, record: 3 items, no event), ${pipeline.concurrency} in flight`,
          pipeline.rawLedger,
        ),
      ],
    ),
    '',
    `## Merchant webhooks of the same runs (credit → event → stream fan-out → deliveries queue → poller → the merchant's endpoint, a local receiver answering 200; each payee has one endpoint for payment.received)`,
    '',
    markdownTable(
      [
        'run',
        'distinct events delivered',
        'repeats',
        'first sent → all delivered',
        'delivered',
        'credits',
        'delivered ÷ credits',
        'webhook→endpoint p50',
        'p99',
      ],
      [events(`${pipeline.merchants} merchants`, pipeline.spread), events('1 hot merchant', pipeline.hot)],
    ),
    '',
    `## Transfers (POST /transfers via the local gateway: the debit, the sandbox partner's call, the settlement; ${CONCURRENCY_NOTE})`,
    '',
    markdownTable(
      ['transfers', 'p50', 'p99', 'per second', 'raw transactions per second', 'ratio'],
      [
        [
          `${results.transfers.latencies.length} (${results.transfers.failures} failed)`,
          ms(percentile(results.transfers.latencies, 50)),
          ms(percentile(results.transfers.latencies, 99)),
          perSecond(results.transfers).toFixed(1),
          perSecond(pipeline.raw).toFixed(1),
          String(json.transfer_throughput_ratio),
        ],
      ],
    ),
    '',
    '## Dashboard first load (Chromium, empty cache, until the sign-in form can be used)',
    '',
    results.dashboard
      ? markdownTable(
          ['bytes downloaded', 'time to interactive (median)', 'runs'],
          [
            [
              kb(results.dashboard.bytes),
              ms(results.dashboard.interactiveMs),
              String(results.dashboard.runs),
            ],
          ],
        )
      : 'Not measured: Chromium could not run (see the progress lines).',
    '',
    '## Goals (reported, not asserted)',
    '',
    markdownTable(
      ['goal', 'measured', 'met'],
      goalRows(json).map((row) => [row.goal, row.measured, row.met ? 'yes' : '**no**']),
    ),
    '',
    `DynamoDB calls per GET /balance in the handler: ${overhead.balanceCalls}.`,
    `GET /balance against a bare node:http handler making the same GetItem: ${json.balance_vs_bare_http_ratio}× (the bare handler is ${json.bare_http_getitem_ratio}× a GetItem: DynamoDB Local answers a GetItem that follows a pause, such as an HTTP hop, slower than one sent right after the last).`,
    `Load average (1 min) at start ${json.load_average_1m[0]}, at end ${json.load_average_1m[1]} (2 cores); wall time ${json.wall_s} s.`,
  ].join('\n');
}
