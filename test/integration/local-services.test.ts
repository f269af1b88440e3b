import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { createTables } from '#infra/local/bootstrap.ts';
import {
  type LocalDynamo,
  removeStaleSqliteLibraries,
  sqliteLibraryDir,
  startDynamoDbLocal,
} from '#infra/local/dynamodb.ts';
import { startPoller } from '#infra/local/poller.ts';
import { freePort } from '#infra/local/process.ts';
import { config } from '#shared/config.ts';
import { deadLetterQueueName, PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';
import { TABLE_LIST } from '#shared/definitions/tables.ts';
import { aQueueWithDlq } from '#test/support/queues.ts';

const dynamo = new DynamoDBClient({ endpoint: config.dynamoEndpoint, region: config.region });
const sqs = new SQSClient({ endpoint: config.sqsEndpoint, region: config.region });
afterAll(() => {
  dynamo.destroy();
  sqs.destroy();
});

describe('local bootstrap', () => {
  it('upgrades a table kept from an earlier version: the indexes, stream and TTL added since are created', async () => {
    const prefix = `upgrade-${Math.random().toString(36).slice(2, 8)}-`;
    // The virtual accounts table as the first release made it: no by-created index; events without a stream.
    await dynamo.send(
      new CreateTableCommand({
        TableName: `${prefix}virtual-accounts`,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'merchant_id', AttributeType: 'S' },
          { AttributeName: 'reference', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'merchant_id', KeyType: 'HASH' },
          { AttributeName: 'reference', KeyType: 'RANGE' },
        ],
      }),
    );
    await dynamo.send(
      new CreateTableCommand({
        TableName: `${prefix}events`,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'merchant_id', AttributeType: 'S' },
          { AttributeName: 'event_id', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'merchant_id', KeyType: 'HASH' },
          { AttributeName: 'event_id', KeyType: 'RANGE' },
        ],
      }),
    );
    await createTables(config.dynamoEndpoint ?? '', prefix);
    const { Table: accounts } = await dynamo.send(
      new DescribeTableCommand({ TableName: `${prefix}virtual-accounts` }),
    );
    expect(accounts?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual(['by-created']);
    const { Table: events } = await dynamo.send(new DescribeTableCommand({ TableName: `${prefix}events` }));
    expect(events?.StreamSpecification).toMatchObject({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    // Its TTL too (the first release made none), and a second bootstrap leaves it as it is.
    const ttl = async () =>
      (await dynamo.send(new DescribeTimeToLiveCommand({ TableName: `${prefix}events` })))
        .TimeToLiveDescription;
    expect(await ttl()).toMatchObject({ AttributeName: 'ttl', TimeToLiveStatus: 'ENABLED' });
    await createTables(config.dynamoEndpoint ?? '', prefix);
    expect(await ttl()).toMatchObject({ AttributeName: 'ttl', TimeToLiveStatus: 'ENABLED' });
  });

  it('created every table of shared/definitions/tables.ts with its keys and TTL', async () => {
    for (const table of TABLE_LIST) {
      const TableName = config.tablePrefix + table.name;
      const { Table } = await dynamo.send(new DescribeTableCommand({ TableName }));
      expect(Table?.KeySchema?.[0]).toEqual({ AttributeName: table.partitionKey.name, KeyType: 'HASH' });
      expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
      const indexes = Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName) ?? [];
      expect(indexes.sort()).toEqual((table.indexes ?? []).map((index) => index.name).sort());
      if (table.ttlAttribute) {
        const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName }));
        expect(ttl.TimeToLiveDescription?.AttributeName).toBe(table.ttlAttribute);
      }
    }
  });

  it('created the payment events queue with its dead-letter redrive', async () => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: config.paymentsQueueUrl, AttributeNames: ['All'] }),
    );
    const redrive = JSON.parse(Attributes?.RedrivePolicy ?? '{}');
    expect(redrive.maxReceiveCount).toBe(PAYMENT_EVENTS_QUEUE.maxReceiveCount);
    expect(redrive.deadLetterTargetArn).toContain(deadLetterQueueName(PAYMENT_EVENTS_QUEUE));
    expect(Number(Attributes?.VisibilityTimeout)).toBe(PAYMENT_EVENTS_QUEUE.consumerTimeoutSeconds * 6);
  });
});

describe('the local queue poller', () => {
  it('deletes what the consumer handled, redelivers what it reported failed, and dead-letters a poison message', async () => {
    const { queueUrl, dlqUrl } = await aQueueWithDlq('poller');
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['ok-1', 'poison', 'ok-2'].map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );

    const handled: string[] = [];
    const receiveCounts: string[] = [];
    const poller = await startPoller({
      endpoint: config.sqsEndpoint ?? '',
      queueUrl,
      batchSize: 10,
      handler: async (event: SQSEvent) => {
        const failures = [];
        for (const record of event.Records) {
          if (record.body === 'poison') {
            receiveCounts.push(record.attributes.ApproximateReceiveCount);
            failures.push({ itemIdentifier: record.messageId });
          } else {
            handled.push(record.body);
          }
        }
        return { batchItemFailures: failures };
      },
    });
    try {
      await expect
        .poll(() => receiveCounts.length, { timeout: 20_000, interval: 200 })
        .toBeGreaterThanOrEqual(2);
      const inDlq = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 5, MaxNumberOfMessages: 10 }),
      );
      expect(inDlq.Messages?.map((m) => m.Body)).toEqual(['poison']);
    } finally {
      await poller.stop();
    }
    // Handled once each: deleted after success, never redelivered.
    expect(handled.sort()).toEqual(['ok-1', 'ok-2']);
  });
});

describe('local services on this machine only', () => {
  /** Whether something accepts a TCP connection at host:port. */
  const accepts = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host, port, timeout: 2000 });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });

  /** Expects 127.0.0.1:port to accept and the machine's other addresses to refuse. */
  async function expectLoopbackOnly(port: number) {
    expect(await accepts('127.0.0.1', port)).toBe(true);
    const external = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address && !address.internal && address.family === 'IPv4')
      .map((address) => address?.address as string);
    // A machine with no other address has nothing to expose; the loopback check above still ran.
    for (const address of external) expect(await accepts(address, port), address).toBe(false);
  }

  it('binds DynamoDB Local to 127.0.0.1: the machine’s other addresses are refused', async () => {
    await expectLoopbackOnly(Number(new URL(config.dynamoEndpoint ?? '').port));
  });

  it('binds it to 127.0.0.1 with a JRE alone too (Java without its compiler module)', async () => {
    // The java launcher reads JDK_JAVA_OPTIONS: limited to Java SE's modules, it is a JRE's java
    // (no jdk.compiler), as with the README's openjdk-17-jre-headless.
    const before = process.env.JDK_JAVA_OPTIONS;
    process.env.JDK_JAVA_OPTIONS = '--limit-modules java.se,jdk.unsupported';
    let dynamoDb: LocalDynamo | undefined;
    try {
      dynamoDb = await startDynamoDbLocal({ port: await freePort() });
    } finally {
      if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
      else process.env.JDK_JAVA_OPTIONS = before;
    }
    try {
      await expectLoopbackOnly(Number(new URL(dynamoDb.endpoint).port));
    } finally {
      await dynamoDb.stop();
    }
  });
});

describe("DynamoDB Local's SQLite library", () => {
  it('is extracted into a folder of ours, where a stale copy is removed, not into the system temp folder', async () => {
    const db = await startDynamoDbLocal({ port: await freePort() });
    let loaded: string[];
    try {
      const pid = db.process.pid;
      // The library files the JVM has mapped (Linux), else the copies in our folder.
      loaded = existsSync(`/proc/${pid}/maps`)
        ? [
            ...new Set(
              readFileSync(`/proc/${pid}/maps`, 'utf8')
                .split('\n')
                .map((line) => line.trim().split(/\s+/).slice(5).join(' '))
                .filter((file) => /sqlite4java/.test(path.basename(file))),
            ),
          ]
        : readdirSync(sqliteLibraryDir).map((name) => path.join(sqliteLibraryDir, name));
      expect(loaded.length).toBeGreaterThan(0);
      for (const file of loaded) expect(path.dirname(file)).toBe(sqliteLibraryDir);
    } finally {
      await db.stop();
    }
    // A clean stop removes its copy (the JVM's exit hooks).
    for (const file of loaded) expect(existsSync(file)).toBe(false);
  });

  it('left by a killed run, is removed once a minute old; a fresh one, or another file, is kept', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sqlite-libs-'));
    try {
      const now = Date.now();
      const file = (name: string, ageMs: number) => {
        writeFileSync(path.join(dir, name), 'x');
        const at = new Date(now - ageMs);
        utimesSync(path.join(dir, name), at, at);
      };
      file('sqlite-392-0a1b-libsqlite4java.so', 61_000);
      file('sqlite-392-0c2d-libsqlite4java.dylib', 3_600_000);
      file('sqlite-392-0e3f-sqlite4java-win32-x64.dll', 120_000);
      file('sqlite-392-1a2b-libsqlite4java.so', 5_000);
      file('notes.txt', 3_600_000);
      expect(removeStaleSqliteLibraries(dir, now)).toBe(3);
      expect(readdirSync(dir).sort()).toEqual(['notes.txt', 'sqlite-392-1a2b-libsqlite4java.so']);
      expect(removeStaleSqliteLibraries(path.join(dir, 'absent'), now)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('DynamoDB Local through our launcher, killed', () => {
  it('keeps every write it answered: a kill -9 right after an answer loses nothing', async () => {
    // DynamoDB Local queues a transaction's COMMIT on its SQLite thread and answers before it runs:
    // without the launcher's wait, the write answered last before a kill -9 was gone (every time
    // in eight rounds here). Writers in parallel keep that thread busy; the kill follows an answer.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ddb-durable-'));
    const port = await freePort();
    try {
      for (let round = 1; round <= 3; round++) {
        const first = round === 1;
        const db = await startDynamoDbLocal({ port, dataDir });
        const client = new DynamoDBClient({
          endpoint: db.endpoint,
          region: config.region,
          maxAttempts: 1,
        });
        if (first) {
          await client.send(
            new CreateTableCommand({
              TableName: 'durable',
              BillingMode: 'PAY_PER_REQUEST',
              AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
              KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            }),
          );
        }
        const answered: string[] = [];
        const killAt = Date.now() + 1_000;
        let killed = false;
        const writer = async (w: number) => {
          for (let i = 0; !killed; i++) {
            const id = `r${round}-w${w}-${i}`;
            try {
              await client.send(
                new TransactWriteItemsCommand({
                  TransactItems: Array.from({ length: 20 }, (_, k) => ({
                    Put: {
                      TableName: 'durable',
                      Item: { pk: { S: `${id}-${k}` }, pad: { S: 'x'.repeat(200) } },
                    },
                  })),
                }),
              );
            } catch {
              return;
            }
            answered.push(id);
            if (!killed && Date.now() >= killAt) {
              killed = true;
              db.process.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 12 }, (_, w) => writer(w)));
        client.destroy();
        await new Promise((resolve) => db.process.once('exit', resolve));

        const again = await startDynamoDbLocal({ port, dataDir });
        const reader = new DynamoDBClient({ endpoint: again.endpoint, region: config.region });
        try {
          const lost = [];
          for (const id of answered.slice(-50)) {
            const { Item } = await reader.send(
              new GetItemCommand({
                TableName: 'durable',
                Key: { pk: { S: `${id}-19` } },
                ConsistentRead: true,
              }),
            );
            if (!Item) lost.push(id);
          }
          expect(answered.length).toBeGreaterThan(0);
          expect(lost, `round ${round}`).toEqual([]);
        } finally {
          reader.destroy();
          await again.stop();
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
