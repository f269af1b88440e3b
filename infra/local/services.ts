import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createQueues, createTables } from '#infra/local/bootstrap.ts';
import { createDashboardUserPool, startCognitoLocal } from '#infra/local/cognito.ts';
import { startDynamoDbLocal } from '#infra/local/dynamodb.ts';
import { localCredentials } from '#infra/local/process.ts';
import { startSandboxPartner } from '#infra/local/sandbox-partner.ts';
import { startLocalSqs } from '#infra/local/sqs.ts';

export interface LocalServicesOptions {
  /** `cognito`: the dashboard's sign-in stand-in, started only when a port is given. */
  ports: { dynamodb: number; sqs: number; sandbox: number; cognito?: number };
  tablePrefix: string;
  /**
   * Keeps the data on disk in this folder (DynamoDB Local's under `dynamodb/`, the queues' journal
   * under `sqs/`); in memory without it.
   */
  dataDir?: string;
  /** Sandbox partner behaviour: where its webhooks go and how it times out and settles. */
  sandbox?: { hangMs?: number; webhookUrl?: string; webhookSecret?: string; settleAfterMs?: number };
}

export interface LocalServices {
  /** The environment that points the unchanged handlers at the local stand-ins. */
  env: Record<string, string>;
  /**
   * Resolves, saying which, if a stand-in in a process of its own (DynamoDB Local, the local
   * Cognito) ends before `stop`: nothing can work without it, so `npm start` stops too.
   */
  lost: Promise<string>;
  stop(): Promise<void>;
}

/**
 * DynamoDB Local, the local SQS server and the sandbox partner, with tables and queues created from
 * the shared definitions. Used by `npm start` and by the test suite's global setup.
 */
export async function startLocalServices(options: LocalServicesOptions): Promise<LocalServices> {
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    for (const stopOne of stops.reverse()) await stopOne().catch(() => undefined);
  };
  let reportLost: (what: string) => void = () => undefined;
  const lost = new Promise<string>((resolve) => {
    reportLost = resolve;
  });
  const watch = (name: string, child: ChildProcess) =>
    child.once('exit', (code, signal) => {
      if (!stopping) reportLost(`${name} exited (${signal ?? `code ${code}`})`);
    });
  try {
    const dynamoDir = options.dataDir && path.join(options.dataDir, 'dynamodb');
    if (dynamoDir) mkdirSync(dynamoDir, { recursive: true });
    const dynamo = await startDynamoDbLocal({ port: options.ports.dynamodb, dataDir: dynamoDir });
    stops.push(dynamo.stop);
    watch('DynamoDB Local', dynamo.process);
    const sqs = await startLocalSqs({ port: options.ports.sqs, dataDir: options.dataDir });
    stops.push(sqs.stop);
    const sandbox = await startSandboxPartner({
      port: options.ports.sandbox,
      ...options.sandbox,
      ...(options.dataDir ? { dataDir: path.join(options.dataDir, 'sandbox') } : {}),
    });
    stops.push(sandbox.close);
    await createTables(dynamo.endpoint, options.tablePrefix);
    const queues = await createQueues(sqs.endpoint, options.tablePrefix);
    let cognito: Record<string, string> = {};
    if (options.ports.cognito !== undefined) {
      let dataDir = options.dataDir;
      if (!dataDir) {
        const scratch = mkdtempSync(path.join(tmpdir(), 'naira-cognito-'));
        stops.push(async () => rmSync(scratch, { recursive: true, force: true }));
        dataDir = scratch;
      }
      const local = await startCognitoLocal({ port: options.ports.cognito, dataDir });
      stops.push(local.stop);
      watch('The local Cognito', local.process);
      const pool = await createDashboardUserPool(local.endpoint, options.tablePrefix);
      cognito = { COGNITO_ENDPOINT: local.endpoint, ...pool };
    }
    return {
      env: {
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        SQS_ENDPOINT: sqs.endpoint,
        TABLE_PREFIX: options.tablePrefix,
        PARTNER_BASE_URL: sandbox.url,
        ...queues,
        ...cognito,
      },
      lost,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
