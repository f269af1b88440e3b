import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { type LocalGateway, startGateway } from '#infra/local/gateway.ts';
import { localLambdaContext } from '#infra/local/lambda-context.ts';
import { type SqsHandler, startPoller } from '#infra/local/poller.ts';
import { sessionVerifierFrom } from '#infra/local/session-verifier.ts';
import { givenUpSender, type StreamHandler, startStreamPoller } from '#infra/local/stream-poller.ts';
import { asFunction, enforceGrantsOfHandlers } from '#infra/local/table-grants.ts';
import { QUEUE_LIST } from '#shared/definitions/queues.ts';
import { REQUERY_TIMEOUT_SECONDS } from '#shared/definitions/routes.ts';
import { STREAMS } from '#shared/definitions/streams.ts';
import { TABLES } from '#shared/definitions/tables.ts';

export interface RuntimeOptions {
  port: number;
  /** Project root: handler files are resolved from it. */
  rootDir: string;
  /** The environment of the local stand-ins (`startLocalServices().env`): queue endpoint and URL. */
  env: Record<string, string>;
  rateLimit?: { requests: number; windowSeconds: number };
  onPollerError?: (error: unknown) => void;
  /** How often the requery of pending transfers runs (API.md §7); default its configured interval. */
  requeryIntervalSeconds?: number;
  /** Told the size of every batch a queue or stream consumer is invoked with (the bench). */
  onBatch?: (consumer: string, records: number) => void;
  /** `npm start`'s data folder: the stream pollers keep their place there across restarts. */
  dataDir?: string;
}

export interface Runtime {
  gateway: LocalGateway;
  stop(): Promise<void>;
}

/**
 * The handlers' side of the local runtime: the gateway serving the route table, a poller per queue
 * and per table stream driving its consumer as Lambda's event source mappings do, and the requery
 * timer. Start it only once
 * `process.env` points at the local stand-ins: the handlers read their configuration at import.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const gateway = await startGateway({
    port: options.port,
    rootDir: options.rootDir,
    rateLimit: options.rateLimit,
    verifySession: sessionVerifierFrom(options.env),
  });
  const stops: (() => Promise<void>)[] = [];
  try {
    await enforceGrantsOfHandlers();
    const load = async <T>(name: string) =>
      (await import(pathToFileURL(path.join(options.rootDir, 'functions', `${name}.ts`)).href)) as {
        handler: T;
      };
    for (const queue of QUEUE_LIST) {
      const { handler } = await load<SqsHandler>(queue.consumer);
      const poller = await startPoller({
        endpoint: options.env.SQS_ENDPOINT ?? '',
        queueUrl: options.env[queue.urlEnv] ?? '',
        handler: (event, context) => {
          options.onBatch?.(queue.consumer, event.Records.length);
          return asFunction(queue.consumer, () => handler(event, context));
        },
        batchSize: queue.batchSize,
        concurrency: queue.localConcurrency,
        onError: options.onPollerError,
      });
      stops.push(poller.stop);
    }
    const givenUp = givenUpSender(options.env);
    stops.push(givenUp.stop);
    for (const stream of STREAMS) {
      const { handler } = await load<StreamHandler>(stream.consumer);
      const poller = await startStreamPoller({
        endpoint: options.env.DYNAMODB_ENDPOINT ?? '',
        tableName: (options.env.TABLE_PREFIX ?? '') + TABLES[stream.table].name,
        handler: (event) => {
          options.onBatch?.(stream.consumer, event.Records.length);
          return asFunction(stream.consumer, () => handler(event));
        },
        batchSize: stream.batchSize,
        onError: options.onPollerError,
        consumer: stream.consumer,
        onGiveUp: (description) => givenUp.send(stream, description),
        ...(options.dataDir && {
          checkpointFile: path.join(options.dataDir, 'streams', `${stream.consumer}.json`),
        }),
      });
      stops.push(poller.stop);
    }
    const requery = await startRequery(options);
    stops.push(requery.stop);
    return {
      gateway,
      // The gateway first: what it accepted is queued before the pollers and the queue stop.
      stop: async () => {
        await gateway.close();
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await gateway.close();
    throw error;
  }
}

/**
 * Runs the scheduled requery function on its interval, as EventBridge does on AWS: one round at a
 * time, its failures reported and the next round tried as usual.
 */
export async function startRequery(options: RuntimeOptions): Promise<{ stop(): Promise<void> }> {
  const file = path.join(options.rootDir, 'functions', 'requery-transfers.ts');
  const { handler } = (await import(pathToFileURL(file).href)) as {
    handler: (event: unknown, context: Context) => Promise<void>;
  };
  const seconds =
    options.requeryIntervalSeconds ?? Number(process.env.TRANSFER_REQUERY_INTERVAL_SECONDS ?? 60);
  let round: Promise<void> | undefined;
  const timer = setInterval(() => {
    // A round still running when the next is due: that one is skipped, never stacked.
    // With its time on AWS, so its partner calls and its round end in time, as there.
    round ??= asFunction('requery-transfers', () =>
      handler(
        {},
        localLambdaContext('requery-transfers', `requery-${Date.now()}`, REQUERY_TIMEOUT_SECONDS * 1000),
      ),
    )
      .catch((error: unknown) => options.onPollerError?.(error))
      .finally(() => {
        round = undefined;
      });
  }, seconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await round;
    },
  };
}
