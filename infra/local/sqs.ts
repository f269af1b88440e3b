import type { Server } from 'node:http';
import { createSqsServer } from 'local-aws-sqs';

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/** Starts the `local-aws-sqs` server (SQS JSON protocol, visibility timeouts, DLQ redrive). */
export async function startLocalSqs(options: { port: number }): Promise<LocalSqs> {
  const server: Server = await createSqsServer({
    port: options.port,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  return {
    endpoint: `http://127.0.0.1:${options.port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
