/**
 * Request overhead: `GET /balance` through the local gateway (autocannon) against one raw GetItem on
 * the same DynamoDB Local, sequentially and at a fixed concurrency; and against a bare `node:http`
 * handler that makes the same GetItem, to tell what any HTTP front costs here from what ours adds.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { requestHandler } from '#shared/aws/request-handler.ts';
import { type CommandCounter, describeCounts } from './diagnostics.ts';

/** Latency samples (ms) of successful requests, and how many were not successful. */
export interface Samples {
  latencies: number[];
  failures: number;
  /** Wall time of the run(s), seconds. */
  seconds: number;
}

/** Successful requests per second. */
export function perSecond(samples: Samples): number {
  return samples.latencies.length / samples.seconds;
}

/** Samples of several runs as one. */
export function mergeSamples(runs: readonly Samples[]): Samples {
  return {
    latencies: runs.flatMap((run) => run.latencies),
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    seconds: runs.reduce((sum, run) => sum + run.seconds, 0),
  };
}

/**
 * Runs each of `runs` in turn, `rounds` times each, and merges each one's samples: drift in machine
 * load (DynamoDB Local's JIT, other processes) then falls on all of them alike.
 */
export async function interleaved<const Runs extends readonly (() => Promise<Samples>)[]>(
  rounds: number,
  ...runs: Runs
): Promise<{ [K in keyof Runs]: Samples }> {
  const samples = runs.map((): Samples[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, run] of runs.entries()) samples[i]?.push(await run());
  }
  return samples.map(mergeSamples) as { [K in keyof Runs]: Samples };
}

export interface LoadOptions {
  count: number;
  concurrency: number;
  /** Hard stop, whatever the count reached. */
  maxMs: number;
}

/** A document client with the settings of `shared/aws/clients.ts` (same HTTP settings, same endpoint). */
export function documentClient(region: string, endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({ region, endpoint, requestHandler: requestHandler() }),
    {
      marshallOptions: { removeUndefinedValues: true },
    },
  );
}

/**
 * The least an HTTP front can be: a `node:http` server in this process whose every request makes the
 * one GetItem and answers its item, with no gateway, routing, authorizer, limiter or middleware.
 */
export async function bareGetItemServer(
  client: DynamoDBDocumentClient,
  input: { TableName: string; Key: Record<string, string> },
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_request, response) => {
    client.send(new GetCommand(input)).then(
      ({ Item }) => {
        response.writeHead(Item ? 200 : 404, { 'Content-Type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify(Item ?? null));
      },
      () => {
        response.writeHead(500).end();
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** `count` HTTP requests through autocannon with `concurrency` connections; 2xx latencies only. */
export async function httpLoad(
  url: string,
  headers: Record<string, string>,
  options: LoadOptions,
): Promise<Samples> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const instance = autocannon({
    url,
    method: 'GET',
    headers,
    connections: options.concurrency,
    pipelining: 1,
    amount: options.count,
    timeout: 10,
  });
  // autocannon's own histogram keeps whole milliseconds; the raw per-response time is exact.
  // autocannon notices the end of a run on its 1 s sampling tick: time the run by its responses.
  let lastResponseAt = started;
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    lastResponseAt = performance.now();
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
    else failures++;
  });
  const timer = setTimeout(() => instance.stop(), options.maxMs);
  try {
    const result = await instance;
    failures += result.errors + result.timeouts;
  } finally {
    clearTimeout(timer);
  }
  return { latencies, failures, seconds: (lastResponseAt - started) / 1000 };
}

/** `count` GetItems of one key, `concurrency` at a time, timed one by one. */
export async function getItemLoad(
  client: DynamoDBDocumentClient,
  input: { TableName: string; Key: Record<string, string> },
  options: LoadOptions,
): Promise<Samples> {
  return callLoad(async () => {
    const { Item } = await client.send(new GetCommand(input));
    if (!Item) throw new Error('item not found');
  }, options);
}

/** `count` calls of `call`, `concurrency` at a time; a call that throws is a failure. */
export async function callLoad(call: () => Promise<void>, options: LoadOptions): Promise<Samples> {
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + options.maxMs;
  const worker = async () => {
    while (issued < options.count && performance.now() < deadline) {
      issued++;
      const t0 = performance.now();
      try {
        await call();
        latencies.push(performance.now() - t0);
      } catch {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}

export interface OverheadOptions {
  balanceUrl: string;
  /** A real merchant's credential headers. */
  headers: Record<string, string>;
  /** The bench's own client and the GetItem that `GET /balance` itself makes (the merchant's wallet). */
  client: DynamoDBDocumentClient;
  getInput: { TableName: string; Key: Record<string, string>; ConsistentRead: boolean };
  sequential: number;
  concurrent: number;
  concurrency: number;
  /** Counts the handlers' DynamoDB calls (attached to the service's client). */
  counter: CommandCounter;
  /**
   * The `GET /balance` handler called in-process with the event the gateway would hand it (the
   * authorizer's verdict included): the same request without the HTTP hop and the local gateway.
   */
  handler: () => Promise<void>;
  progress: (message: string) => void;
}

export interface OverheadResult {
  balance: Samples;
  getItem: Samples;
  balanceC16: Samples;
  getItemC16: Samples;
  concurrency: number;
  /** DynamoDB calls the handler made per GET /balance (diagnostics). */
  balanceCalls: string;
  /** The handler called in-process, sequentially, and the GetItems of the same rounds. */
  handler: Samples;
  handlerGetItem: Samples;
  /**
   * Sequential, in the same rounds: GET /balance, the bare HTTP handler of `bareGetItemServer`, and
   * GetItem. DynamoDB Local answers a GetItem that follows a pause (however short: the HTTP hop)
   * slower than one sent right after the last, so an HTTP front costs more here than its own code.
   */
  bareBalance: Samples;
  bare: Samples;
  bareGetItem: Samples;
}

/**
 * GET /balance against GetItem: after a warm-up, sequentially and then `concurrency` in flight,
 * each in alternating rounds.
 */
export async function measureOverhead(options: OverheadOptions): Promise<OverheadResult> {
  const { balanceUrl, headers, client, getInput, concurrency, progress } = options;
  // The first requests of a fresh stack run slower (Node's and DynamoDB Local's JIT), the gateway's
  // more than the GetItem's: as many sequential requests of each as a measured pass sends, and a
  // third of a concurrent pass, go first unmeasured. (With 300 of each, the first pass read 1.65–1.69
  // where the third read 1.37–1.39; with these it still moved by run, 1.28–1.65.)
  const warmUp = [
    [options.sequential, 1],
    [Math.ceil(options.concurrent / 3), concurrency],
  ] as const;
  progress(
    `warming up GET /balance and GetItem (x${warmUp[0][0]} each sequential, x${warmUp[1][0]} each ${concurrency} in flight)`,
  );
  for (const [count, inFlight] of warmUp) {
    await httpLoad(balanceUrl, headers, { count, concurrency: inFlight, maxMs: 30_000 });
    await getItemLoad(client, getInput, { count, concurrency: inFlight, maxMs: 30_000 });
  }
  const rounds = 4;
  const httpRun = (url: string, sent: Record<string, string>) => (count: number, inFlight: number) => () =>
    httpLoad(url, sent, { count: Math.ceil(count / rounds), concurrency: inFlight, maxMs: 20_000 });
  const balanceRun = httpRun(balanceUrl, headers);
  const getItemRun = (count: number, inFlight: number) => () =>
    getItemLoad(client, getInput, { count: Math.ceil(count / rounds), concurrency: inFlight, maxMs: 15_000 });
  options.counter.take();
  progress(`GET /balance and GetItem x${options.sequential} each, sequential, ${rounds} alternating rounds`);
  const [balance, getItem] = await interleaved(
    rounds,
    balanceRun(options.sequential, 1),
    getItemRun(options.sequential, 1),
  );
  progress(
    `GET /balance and GetItem x${options.concurrent} each, ${concurrency} in flight, ${rounds} rounds`,
  );
  const [balanceC16, getItemC16] = await interleaved(
    rounds,
    balanceRun(options.concurrent, concurrency),
    getItemRun(options.concurrent, concurrency),
  );
  const balanceCalls = describeCounts(
    options.counter.take(),
    balance.latencies.length + balanceC16.latencies.length,
  );
  progress(`  DynamoDB calls per GET /balance: ${balanceCalls}`);
  progress(
    `the GET /balance handler called in-process and GetItem x${options.sequential} each, ${rounds} rounds`,
  );
  const [handler, handlerGetItem] = await interleaved(
    rounds,
    () =>
      callLoad(options.handler, {
        count: Math.ceil(options.sequential / rounds),
        concurrency: 1,
        maxMs: 15_000,
      }),
    getItemRun(options.sequential, 1),
  );
  progress(
    `GET /balance, a bare HTTP handler making the same GetItem, and GetItem x${options.sequential} each, ${rounds} rounds`,
  );
  const bareServer = await bareGetItemServer(client, getInput);
  const [bareBalance, bare, bareGetItem] = await interleaved(
    rounds,
    balanceRun(options.sequential, 1),
    httpRun(bareServer.url, {})(options.sequential, 1),
    getItemRun(options.sequential, 1),
  ).finally(bareServer.close);
  const samples = {
    balance,
    getItem,
    balanceC16,
    getItemC16,
    handler,
    handlerGetItem,
    bareBalance,
    bare,
    bareGetItem,
  };
  for (const [label, run] of Object.entries(samples)) {
    if (run.failures > 0) progress(`WARNING: ${label} had ${run.failures} failed requests`);
  }
  return { ...samples, concurrency, balanceCalls };
}
