import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localCredentials } from '#infra/local/process.ts';
import {
  deadLetterQueueName,
  QUEUE_LIST,
  type QueueDefinition,
  visibilityTimeoutSeconds,
} from '#shared/definitions/queues.ts';
import { givenUpQueueName, STREAMS } from '#shared/definitions/streams.ts';
import { TABLE_LIST, type TableDefinition } from '#shared/definitions/tables.ts';

function createTableInput(prefix: string, table: TableDefinition): CreateTableCommandInput {
  const keys = [table, ...(table.indexes ?? [])].flatMap((k) => [
    k.partitionKey,
    ...(k.sortKey ? [k.sortKey] : []),
  ]);
  const attributes = new Map(keys.map((k) => [k.name, k.type]));
  const keySchema = (k: Pick<TableDefinition, 'partitionKey' | 'sortKey'>) => [
    { AttributeName: k.partitionKey.name, KeyType: 'HASH' as const },
    ...(k.sortKey ? [{ AttributeName: k.sortKey.name, KeyType: 'RANGE' as const }] : []),
  ];
  return {
    TableName: prefix + table.name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType,
    })),
    KeySchema: keySchema(table),
    GlobalSecondaryIndexes: table.indexes?.map((index) => ({
      IndexName: index.name,
      KeySchema: keySchema(index),
      Projection: { ProjectionType: 'ALL' },
    })),
    StreamSpecification: table.stream ? { StreamEnabled: true, StreamViewType: table.stream } : undefined,
  };
}

/**
 * Brings a table kept from an earlier version (the data folder of `npm start`) up to its
 * definition: indexes and the stream added since are created, so an upgrade needs no `--fresh`.
 */
async function upgradeTable(client: DynamoDBClient, prefix: string, table: TableDefinition): Promise<void> {
  const input = createTableInput(prefix, table);
  const { Table } = await client.send(new DescribeTableCommand({ TableName: input.TableName }));
  const existing = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of input.GlobalSecondaryIndexes ?? []) {
    if (existing.has(index.IndexName)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: input.TableName,
        AttributeDefinitions: input.AttributeDefinitions,
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  }
  if (input.StreamSpecification && !Table?.StreamSpecification?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({ TableName: input.TableName, StreamSpecification: input.StreamSpecification }),
    );
  }
}

/** Creates every table of `shared/definitions/tables.ts` that does not exist yet, and upgrades the rest. */
export async function createTables(endpoint: string, prefix: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: localCredentials });
  try {
    for (const table of TABLE_LIST) {
      try {
        await client.send(new CreateTableCommand(createTableInput(prefix, table)));
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
        await upgradeTable(client, prefix, table);
      }
      // Also on a table made before it had a TTL attribute (a data folder kept across versions).
      if (table.ttlAttribute) {
        const { TimeToLiveDescription: ttl } = await client.send(
          new DescribeTimeToLiveCommand({ TableName: prefix + table.name }),
        );
        if (ttl?.TimeToLiveStatus !== 'ENABLED') {
          await client.send(
            new UpdateTimeToLiveCommand({
              TableName: prefix + table.name,
              TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
            }),
          );
        }
      }
    }
  } finally {
    client.destroy();
  }
}

/** Creates a queue and its dead-letter queue (idempotent); returns the queue's URL. */
async function createQueue(client: SQSClient, prefix: string, queue: QueueDefinition): Promise<string> {
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: prefix + deadLetterQueueName(queue),
      Attributes: { MessageRetentionPeriod: String(14 * 24 * 3600) },
    }),
  );
  const dlqAttributes = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const created = await client.send(
    new CreateQueueCommand({
      QueueName: prefix + queue.name,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds(queue)),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqAttributes.Attributes?.QueueArn,
          maxReceiveCount: queue.maxReceiveCount,
        }),
      },
    }),
  );
  if (!created.QueueUrl) throw new Error(`queue ${queue.name} was not created`);
  return created.QueueUrl;
}

/**
 * Creates the service's queues, and each stream's given-up queue as the stack does (for the
 * operator's `npm run ops -- given-up …`); returns the environment that points the handlers at them.
 */
export async function createQueues(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = new SQSClient({ endpoint, region: 'us-east-1', credentials: localCredentials });
  try {
    const env: Record<string, string> = {};
    for (const queue of QUEUE_LIST) env[queue.urlEnv] = await createQueue(client, prefix, queue);
    for (const stream of STREAMS)
      await client.send(
        new CreateQueueCommand({
          QueueName: prefix + givenUpQueueName(stream),
          Attributes: { MessageRetentionPeriod: String(14 * 24 * 3600) },
        }),
      );
    return env;
  } finally {
    client.destroy();
  }
}
