import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runOps } from '#infra/cli/ops.ts';

// No AWS account exists here: every AWS call of `npm run ops -- … --stage prod` is mocked, and the
// test checks that the CLI works on the stage's own queues and tables.
const ssm = mockClient(SSMClient);
const sqs = mockClient(SQSClient);
const dynamo = mockClient(DynamoDBDocumentClient);
const savedEnv = { ...process.env };

beforeEach(() => {
  for (const mock of [ssm, sqs, dynamo]) mock.reset();
  ssm.on(GetParameterCommand, { Name: '/naira/prod/operator-config' }).resolves({
    Parameter: {
      Value: JSON.stringify({
        tablePrefix: 'naira-prod-',
        usagePlanId: 'plan123',
        pepperSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/api-key-pepper',
        partnerBaseUrl: 'https://partner.example.ng',
        partnerBankCode: '101',
      }),
    },
  });
  sqs.on(GetQueueUrlCommand).callsFake(({ QueueName }: { QueueName: string }) => ({
    QueueUrl: `https://sqs.eu-west-1.amazonaws.com/111122223333/${QueueName}`,
  }));
});
afterAll(() => {
  process.env = savedEnv;
});

describe('npm run ops -- … --stage prod', () => {
  it('lists the dead-letter queue of the stage and makes what it read visible again', async () => {
    const dlq = 'https://sqs.eu-west-1.amazonaws.com/111122223333/naira-prod-payment-events-dlq';
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({
        Messages: [
          {
            MessageId: 'm-1',
            ReceiptHandle: 'rh-1',
            Body: '{"type":"TransferSettled","partner":"paystack","reference":"t-1"}',
            Attributes: { ApproximateReceiveCount: '6', SentTimestamp: '1790000000000' },
          },
        ],
      })
      .resolves({});
    const listed = JSON.parse(await runOps(['dlq', 'list', '--json', '--stage', 'prod']));
    expect(listed).toEqual([
      expect.objectContaining({
        messageId: 'm-1',
        receiveCount: 6,
        summary: 'type=TransferSettled partner=paystack reference=t-1',
      }),
    ]);
    expect(sqs.commandCalls(GetQueueUrlCommand).map((call) => call.args[0].input.QueueName)).toEqual([
      'naira-prod-payment-events',
      'naira-prod-payment-events-dlq',
    ]);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.QueueUrl).toBe(dlq);
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: dlq,
      Entries: [{ Id: '0', ReceiptHandle: 'rh-1', VisibilityTimeout: 0 }],
    });
  });

  it("lists the stage's given-up queue of the events stream", async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    expect(await runOps(['given-up', 'list', '--stage', 'prod'])).toBe(
      'No batches given up by the events stream',
    );
    expect(sqs.commandCalls(GetQueueUrlCommand).map((call) => call.args[0].input.QueueName)).toEqual([
      'naira-prod-fan-out-events-given-up',
    ]);
  });

  it("fans a window out again from the stage's merchants and events, to its deliveries queue", async () => {
    dynamo.on(ScanCommand).resolves({ Items: [{ merchant_id: 'mer_1' }] });
    dynamo.on(QueryCommand).resolves({ Items: [] });
    const report = JSON.parse(
      await runOps([
        'events',
        'fan-out',
        '--from',
        '2026-11-21T10:00:00Z',
        '--to',
        '2026-11-21T10:10:00Z',
        '--json',
        '--stage',
        'prod',
      ]),
    );
    expect(report).toEqual({
      from: '2026-11-21T10:00:00.000Z',
      to: '2026-11-21T10:10:00.000Z',
      merchants: 1,
      events: 0,
      queued: 0,
      skipped: [],
    });
    expect(dynamo.commandCalls(ScanCommand)[0]?.args[0].input.TableName).toBe('naira-prod-merchants');
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'naira-prod-events',
      ExpressionAttributeValues: {
        ':m': 'mer_1',
        ':from': `evt_${Date.parse('2026-11-21T10:00:00Z').toString(16).padStart(12, '0')}`,
        ':to': `evt_${Date.parse('2026-11-21T10:10:00Z').toString(16).padStart(12, '0')}~`,
      },
    });
    expect(sqs.commandCalls(GetQueueUrlCommand).map((call) => call.args[0].input.QueueName)).toEqual([
      'naira-prod-webhook-deliveries',
    ]);
  });

  describe('given-up replay', () => {
    const givenUp = 'https://sqs.eu-west-1.amazonaws.com/111122223333/naira-prod-fan-out-events-given-up';
    const description = JSON.stringify({
      requestContext: { condition: 'RecordAgeExceeded' },
      DDBStreamBatchInfo: {
        shardId: 'shardId-1',
        startSequenceNumber: '1',
        endSequenceNumber: '2',
        approximateArrivalOfFirstRecord: '2026-11-21T10:00:00Z',
        approximateArrivalOfLastRecord: '2026-11-21T10:00:01Z',
        batchSize: 2,
      },
    });
    const oneMessage = () =>
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({ Messages: [{ MessageId: 'g-1', ReceiptHandle: 'rh-g1', Body: description }] })
        .resolves({});
    const replay = () => runOps(['given-up', 'replay', '--json', '--stage', 'prod']);

    it('holds the batch from other operators while it fans out, and deletes it only after', async () => {
      oneMessage();
      dynamo.on(ScanCommand).resolves({ Items: [] });
      const [replayed] = JSON.parse(await replay());
      expect(replayed).toMatchObject({ messageId: 'g-1', deleted: true, fannedOut: { events: 0 } });
      expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input).toEqual({
        QueueUrl: givenUp,
        Entries: [{ Id: '0', ReceiptHandle: 'rh-g1', VisibilityTimeout: 900 }],
      });
      expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input).toEqual({
        QueueUrl: givenUp,
        ReceiptHandle: 'rh-g1',
        VisibilityTimeout: 900,
      });
      expect(sqs.commandCalls(DeleteMessageCommand).map((call) => call.args[0].input)).toEqual([
        { QueueUrl: givenUp, ReceiptHandle: 'rh-g1' },
      ]);
      // The window was read (its merchants) before the message was deleted.
      const [scan] = dynamo.commandCalls(ScanCommand);
      const [deleted] = sqs.commandCalls(DeleteMessageCommand);
      expect(scan && deleted && scan.calledBefore(deleted)).toBe(true);
    });

    it('keeps the batch, visible again at once, when its fan-out fails', async () => {
      oneMessage();
      dynamo.on(ScanCommand).rejects(new Error('DynamoDB is down'));
      const output: string[] = [];
      const log = console.log;
      console.log = (line: string) => output.push(line);
      try {
        await expect(replay()).rejects.toThrow('1 batch(es) not replayed');
      } finally {
        console.log = log;
      }
      expect(JSON.parse(output.join(''))).toEqual([
        expect.objectContaining({ messageId: 'g-1', deleted: false, error: 'Error: DynamoDB is down' }),
      ]);
      expect(sqs.commandCalls(DeleteMessageCommand)).toEqual([]);
      expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand).at(-1)?.args[0].input.Entries).toEqual([
        { Id: '0', ReceiptHandle: 'rh-g1', VisibilityTimeout: 0 },
      ]);
    });
  });

  it('reads the unmatched payments of the stage table', async () => {
    dynamo.on(ScanCommand).resolves({ Items: [] });
    expect(await runOps(['unmatched', 'list', '--stage', 'prod'])).toBe('No unmatched payments (open,held)');
    expect(dynamo.commandCalls(ScanCommand)[0]?.args[0].input.TableName).toBe(
      'naira-prod-unmatched-payments',
    );
  });
});
