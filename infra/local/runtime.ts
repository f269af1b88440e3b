import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type LocalGateway, startGateway } from '#infra/local/gateway.ts';
import { type SqsHandler, startPoller } from '#infra/local/poller.ts';
import { PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';

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
}

export interface Runtime {
  gateway: LocalGateway;
  stop(): Promise<void>;
}

/**
 * The handlers' side of the local runtime: the gateway serving the route table, and the queue
 * poller driving the consumer as Lambda's event source mapping does. Start it only once
 * `process.env` points at the local stand-ins: the handlers read their configuration at import.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const gateway = await startGateway({
    port: options.port,
    rootDir: options.rootDir,
    rateLimit: options.rateLimit,
  });
  try {
    const consumerFile = path.join(options.rootDir, 'functions', `${PAYMENT_EVENTS_QUEUE.consumer}.ts`);
    const { handler } = (await import(pathToFileURL(consumerFile).href)) as { handler: SqsHandler };
    const poller = await startPoller({
      endpoint: options.env.SQS_ENDPOINT ?? '',
      queueUrl: options.env.PAYMENTS_QUEUE_URL ?? '',
      handler,
      batchSize: PAYMENT_EVENTS_QUEUE.batchSize,
      concurrency: PAYMENT_EVENTS_QUEUE.localConcurrency,
      onError: options.onPollerError,
    });
    const requery = await startRequery(options);
    return {
      gateway,
      stop: async () => {
        await requery.stop();
        await poller.stop();
        await gateway.close();
      },
    };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

/**
 * Runs the scheduled requery function on its interval, as EventBridge does on AWS: one round at a
 * time, its failures reported and the next round tried as usual.
 */
async function startRequery(options: RuntimeOptions): Promise<{ stop(): Promise<void> }> {
  const file = path.join(options.rootDir, 'functions', 'requery-transfers.ts');
  const { handler } = (await import(pathToFileURL(file).href)) as { handler: () => Promise<void> };
  const seconds =
    options.requeryIntervalSeconds ?? Number(process.env.TRANSFER_REQUERY_INTERVAL_SECONDS ?? 60);
  let round: Promise<void> | undefined;
  const timer = setInterval(() => {
    // A round still running when the next is due: that one is skipped, never stacked.
    round ??= handler()
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
