import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { startPoller } from '#infra/local/poller.ts';
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
