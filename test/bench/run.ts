/**
 * `npm run bench [-- --json] [-- --quick] [-- --import-node <node binary>]`: cold start proxy, request overhead, credit pipeline (with
 * its payments' events delivered to the merchants' webhook endpoint) and hot merchant, against a
 * local stack this process starts (DynamoDB Local in memory, local SQS, the sandbox partner, an
 * in-process gateway, the queue and stream pollers) and stops again. Progress goes to stderr; the
 * report to stdout, with `--json` one JSON object as the last line.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { BUNDLING } from '#infra/bundling.ts';
import { freePort } from '#infra/local/process.ts';
import { type LocalServices, startLocalServices } from '#infra/local/services.ts';
import { PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';
import { bundleAll, type ImportShare, pairedImportTimes, profileImport } from './bundles.ts';
import { measureDashboardLoad } from './dashboard.ts';
import { BatchSizes, CommandCounter } from './diagnostics.ts';
import { documentClient, measureOverhead } from './http.ts';
import { type BenchResults, type ColdStartResult, toJson, toMarkdown } from './report.ts';
import { transferLoad } from './transfers.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** The whole run must end well inside 10 minutes; past this it stops everything and fails. */
const HARD_LIMIT_MS = 9.5 * 60_000;

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    // The node binary that imports the bundles (the cold start proxy): this one's by default.
    'import-node': { type: 'string', default: process.execPath },
  },
});
const IMPORT_NODE = args['import-node'];
/** The version of the node that imports the bundles, e.g. `v22.23.3` (checked before anything runs). */
const IMPORT_NODE_VERSION = execFileSync(IMPORT_NODE, ['--version'], { encoding: 'utf8' }).trim();

/** Sizes of each measurement; `--quick` is a smoke run of the same code. */
const SIZES = args.quick
  ? {
      importRuns: 3,
      seq: 200,
      c16: 400,
      merchants: 20,
      payments: 200,
      hotPayments: 100,
      pageLoads: 3,
      transfers: 200,
    }
  : {
      importRuns: 31,
      seq: 2000,
      c16: 3000,
      merchants: 50,
      payments: 2000,
      hotPayments: 1000,
      pageLoads: 11,
      transfers: 1000,
    };
const CONCURRENCY = 16;

const started = performance.now();
function progress(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
}

async function coldStart(tmpDir: string): Promise<ColdStartResult> {
  // Every function of the stack (one per handler file: routes, authorizer, consumers, requery,
  // the 405 function); the baseline last.
  const entries = [
    ...readdirSync(path.join(ROOT, 'functions'))
      .filter((file) => file.endsWith('.ts'))
      .sort()
      .map((file) => ({ name: file.replace(/\.ts$/, ''), entry: path.join(ROOT, 'functions', file) })),
    { name: 'baseline', entry: path.join(import.meta.dirname, 'baseline-handler.ts') },
  ];
  progress(`bundling ${entries.length} entries with esbuild (infra/bundling.ts options)`);
  const bundles = await bundleAll(ROOT, BUNDLING, entries, tmpDir);
  const baselineBundle = bundles.at(-1);
  if (!baselineBundle) throw new Error('no baseline bundle');
  const functionBundles = bundles.slice(0, -1);
  progress(
    `importing each bundle in ${SIZES.importRuns} fresh node ${IMPORT_NODE_VERSION} processes, each next to an import of the baseline (sequential, pairs in alternating order)`,
  );
  const times = await pairedImportTimes(
    functionBundles.map((bundle) => bundle.file),
    baselineBundle.file,
    SIZES.importRuns,
    (round) => round % 5 === 0 && progress(`  import round ${round}/${SIZES.importRuns}`),
    IMPORT_NODE,
  );
  progress('profiling one more import of each bundle (node --cpu-prof, source-mapped to packages)');
  const profiles: ImportShare[][] = [];
  for (const bundle of bundles) profiles.push(await profileImport(bundle.file, ROOT, undefined, IMPORT_NODE));
  const measured = functionBundles.map((bundle, i) => ({
    ...bundle,
    importMs: times.files[i]?.medianMs ?? Number.NaN,
    importRatio: times.files[i]?.ratio ?? Number.NaN,
    importProfile: profiles[i] ?? [],
  }));
  const baseline = {
    ...baselineBundle,
    importMs: times.baselineMs,
    importRatio: 1,
    importProfile: profiles.at(-1) ?? [],
  };
  return { functions: measured, baseline, runs: SIZES.importRuns, node: IMPORT_NODE_VERSION };
}

/**
 * The measurements that need the local stack: gateway (rate limit lifted), pollers driving the real
 * consumers, and the shared modules (pipeline.ts among their importers), imported only now because
 * they read the environment at import.
 */
async function withStack(env: Record<string, string>, webhookSecret: string) {
  const [{ onboardMerchant }, { dynamo, tableName }, pipeline, { startRuntime }] = await Promise.all([
    import('#shared/merchants/onboard.ts'),
    import('#shared/aws/clients.ts'),
    import('./pipeline.ts'),
    import('#infra/local/runtime.ts'),
  ]);
  const counter = new CommandCounter().attach(dynamo);
  const batches = new BatchSizes();
  const client = documentClient(env.AWS_REGION ?? 'us-east-1', env.DYNAMODB_ENDPOINT ?? '');
  const cleanups: (() => Promise<void>)[] = [async () => client.destroy()];
  try {
    // The per-key limit (100/min) would stop the benchmark within a second: lifted here, and said so.
    let pollerErrors = 0;
    const { gateway, stop } = await startRuntime({
      port: await freePort(),
      rootDir: ROOT,
      env,
      rateLimit: { requests: 1e9, windowSeconds: 60 },
      onBatch: batches.record,
      onPollerError: (error) => {
        pollerErrors++;
        if (pollerErrors <= 3) progress(`poller error: ${String(error)}`);
      },
    });
    cleanups.unshift(stop);

    const { merchant, key, apiSecret } = await onboardMerchant('Bench Balance Ltd');
    const { handler: getBalance } = await import('#functions/get-balance.ts');
    const { apiEvent, lambdaContext } = await import('#test/support/events.ts');
    // The event the gateway hands the handler once the authorizer allowed the key.
    const balanceEvent = () =>
      apiEvent({
        resource: '/balance',
        path: '/balance',
        httpMethod: 'GET',
        requestContext: {
          requestId: randomUUID(),
          identity: { sourceIp: '127.0.0.1' },
          resourcePath: '/balance',
          authorizer: {
            principalId: merchant.merchant_id,
            merchantId: merchant.merchant_id,
            apiKey: key.api_key,
          },
        } as unknown as APIGatewayProxyEvent['requestContext'],
      });
    const overhead = await measureOverhead({
      balanceUrl: `${gateway.url}/balance`,
      headers: { 'X-API-Key': key.api_key, 'X-API-Secret': apiSecret },
      client,
      getInput: {
        TableName: tableName('merchants'),
        Key: { merchant_id: merchant.merchant_id },
        ConsistentRead: true,
      },
      sequential: SIZES.seq,
      concurrent: SIZES.c16,
      concurrency: CONCURRENCY,
      counter,
      handler: async () => {
        const result = await getBalance(balanceEvent(), lambdaContext);
        if (result.statusCode !== 200) throw new Error(`GET /balance handler answered ${result.statusCode}`);
      },
      progress,
    });
    const credits = await pipeline.measurePipeline({
      client,
      webhookUrl: `${gateway.url}/webhooks/payments`,
      webhookSecret,
      merchants: SIZES.merchants,
      payments: SIZES.payments,
      hotPayments: SIZES.hotPayments,
      concurrency: CONCURRENCY,
      batchSize: PAYMENT_EVENTS_QUEUE.batchSize,
      counter,
      batches,
      progress,
    });
    progress(`transfers: ${SIZES.transfers} POST /transfers, ${CONCURRENCY} payers, one in flight each`);
    const { credit } = await import('#shared/ledger/ledger.ts');
    const payers = await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, i) => {
        const payer = await onboardMerchant(`Bench Transfers ${i}`);
        await credit({
          entryId: `payment:bench-funding-${payer.merchant.merchant_id}`,
          merchantId: payer.merchant.merchant_id,
          amount: SIZES.transfers * 10_000,
          category: 'payment',
          reference: 'bench funding',
        });
        return { 'X-API-Key': payer.key.api_key, 'X-API-Secret': payer.apiSecret };
      }),
    );
    const transfers = await transferLoad({ url: `${gateway.url}/transfers`, payers, count: SIZES.transfers });
    progress(
      `  ${(transfers.latencies.length / transfers.seconds).toFixed(1)} transfers/s, ${transfers.failures} failed`,
    );
    if (pollerErrors > 0) progress(`WARNING: ${pollerErrors} poller errors`);
    progress(`dashboard first load in Chromium, ${SIZES.pageLoads} fresh contexts`);
    const dashboard = await measureDashboardLoad(`${gateway.url}/dashboard/`, SIZES.pageLoads).catch(
      (error: unknown) => {
        progress(`dashboard first load not measured: ${String(error)}`);
        return undefined;
      },
    );
    return { overhead, pipeline: credits, dashboard, transfers };
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

async function measure(): Promise<BenchResults> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'naira-bench-'));
  let services: LocalServices | undefined;
  const stopAndExit = (message: string, code: number) => {
    progress(message);
    void (services?.stop() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  const watchdog = setTimeout(
    () => stopAndExit(`over ${HARD_LIMIT_MS / 60_000} minutes: stopping`, 2),
    HARD_LIMIT_MS,
  );
  watchdog.unref();
  process.once('SIGINT', () => stopAndExit('interrupted: stopping', 130));
  try {
    // 1. Cold start, before any service runs, so nothing else competes for the two cores.
    const coldStartResult = await coldStart(tmpDir);

    progress('starting DynamoDB Local (in memory), local SQS and the sandbox partner');
    const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
    services = await startLocalServices({
      ports: { dynamodb: await freePort(), sqs: await freePort(), sandbox: await freePort() },
      tablePrefix: 'bench-',
    });
    Object.assign(process.env, services.env, {
      LOG_LEVEL: 'SILENT',
      API_KEY_PEPPER: randomBytes(32).toString('hex'),
      PARTNER_WEBHOOK_SECRET: webhookSecret,
      // Merchants' webhook secrets derive from this key; their endpoints (the bench's receiver) are
      // on loopback, which only this local setting allows.
      MERCHANT_WEBHOOK_KEY: randomBytes(32).toString('hex'),
      MERCHANT_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    // 2. Request overhead, 3. credit pipeline (with the events at the merchants' endpoints), 4. hot merchant.
    const stack = await withStack(services.env, webhookSecret);
    return {
      coldStart: coldStartResult,
      ...stack,
      loadAverage: { start: loadAtStart, end: os.loadavg()[0] ?? 0 },
      wallSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    progress('stopping the local stack');
    await services?.stop();
    await rm(tmpDir, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
}

// Printed once everything is stopped, so the JSON line is the very last line of the run.
measure().then(
  (results) => {
    const json = args.json ? `${JSON.stringify(toJson(results))}\n` : '';
    // Exit once written: keep-alive sockets of the clients would otherwise hold the process open.
    process.stdout.write(`${toMarkdown(results)}\n${json}`, () => process.exit(0));
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
