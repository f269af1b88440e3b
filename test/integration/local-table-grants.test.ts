import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, asFunction, enforceGrantsOfHandlers, grantsOf } from '#infra/local/table-grants.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { QUEUE_LIST, QUEUES } from '#shared/definitions/queues.ts';
import { API_KEY_AUTHORIZER, ROUTES } from '#shared/definitions/routes.ts';
import { STREAMS } from '#shared/definitions/streams.ts';
import { apiKeyPepper, merchantWebhookKey, webhookKeys } from '#shared/secrets.ts';
import { aMerchant } from '#test/support/merchants.ts';

/** The AWS SDK error name of a refused call, or 'sent' when DynamoDB Local answered. */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'sent',
    (error: Error) => error.name,
  );

beforeAll(enforceGrantsOfHandlers);

describe("the local runtime holds each function to its role's table, queue and secret grants, as IAM does on AWS", () => {
  it('knows the grants of every function of the stack', () => {
    const functions = [
      ...ROUTES.map((route) => route.name),
      ...QUEUE_LIST.map((queue) => queue.consumer),
      ...STREAMS.map((stream) => stream.consumer),
      'requery-transfers',
      API_KEY_AUTHORIZER.name,
    ];
    for (const name of functions) expect(() => grantsOf(name), name).not.toThrow();
    expect(() => grantsOf('no-such-function')).toThrow(/no function no-such-function/);
  });

  it('reads every table and action a command names, transaction items one by one', () => {
    expect(actionsOf('GetItemCommand', { TableName: 't1' })).toEqual([['t1', 'GetItem']]);
    expect(
      actionsOf('TransactWriteItemsCommand', {
        TransactItems: [
          { Update: { TableName: 'a' } },
          { Put: { TableName: 'b' } },
          { ConditionCheck: { TableName: 'c' } },
        ],
      }),
    ).toEqual([
      ['a', 'UpdateItem'],
      ['b', 'PutItem'],
      ['c', 'ConditionCheckItem'],
    ]);
    expect(actionsOf('BatchGetItemCommand', { RequestItems: { x: {}, y: {} } })).toEqual([
      ['x', 'BatchGetItem'],
      ['y', 'BatchGetItem'],
    ]);
    expect(actionsOf('DescribeTableCommand', { TableName: 'a' })).toEqual([['*', 'DescribeTable']]);
  });

  it('refuses a call outside the grants with AccessDeniedException, sending nothing; allows the granted ones', async () => {
    const { merchant } = await aMerchant();
    const key = { merchant_id: merchant.merchant_id };
    const read = () => dynamo.send(new GetCommand({ TableName: tableName('merchants'), Key: key }));
    // get-balance reads the merchant's wallet, and may write nothing.
    expect(await outcome(asFunction('get-balance', read))).toBe('sent');
    const event = { merchant_id: merchant.merchant_id, event_id: `evt_grants_${Date.now()}` };
    const putEvent = () => dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
    expect(await outcome(asFunction('get-balance', putEvent))).toBe('AccessDeniedException');
    // One item of a transaction outside the grants refuses the whole transaction.
    const transaction = () =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName('merchants'),
                Key: key,
                UpdateExpression: 'SET probe = :p',
                ExpressionAttributeValues: { ':p': 1 },
              },
            },
            { Put: { TableName: tableName('events'), Item: event } },
          ],
        }),
      );
    expect(await outcome(asFunction('list-banks', transaction))).toBe('AccessDeniedException');
    expect((await read()).Item?.probe).toBeUndefined();
    // Outside an invocation (a test, the operator's CLI) nothing is checked.
    expect(await outcome(putEvent())).toBe('sent');
  });

  it('lets a function send only to the queues it sends to, and make no other SQS call', async () => {
    const paymentsQueue = process.env[QUEUES.paymentEvents.urlEnv] ?? '';
    // An empty body: SQS itself refuses it, so a call the grants let through writes nothing.
    const send = () => sqs.send(new SendMessageCommand({ QueueUrl: paymentsQueue, MessageBody: '' }));
    expect(await outcome(asFunction('get-balance', send))).toBe('AccessDeniedException');
    expect(await outcome(asFunction('deliver-webhooks', send))).toBe('AccessDeniedException');
    const allowed = await outcome(asFunction('receive-partner-webhook', send));
    expect(allowed).not.toBe('AccessDeniedException');
    expect(allowed).not.toBe('sent');
    const receive = () =>
      sqs.send(new ReceiveMessageCommand({ QueueUrl: paymentsQueue, WaitTimeSeconds: 0 }));
    expect(await outcome(asFunction('receive-partner-webhook', receive))).toBe('AccessDeniedException');
  });

  it('lets a function read only the secrets its role is granted', async () => {
    // The pepper: the authorizer and the dashboard's key routes, nobody else.
    expect(await outcome(asFunction(API_KEY_AUTHORIZER.name, apiKeyPepper))).toBe('sent');
    expect(await outcome(asFunction('create-api-key', apiKeyPepper))).toBe('sent');
    expect(await outcome(asFunction('get-balance', apiKeyPepper))).toBe('AccessDeniedException');
    // The partner's signing keys: the partner webhook only.
    expect(await outcome(asFunction('receive-partner-webhook', webhookKeys))).toBe('sent');
    expect(await outcome(asFunction('create-transfer', webhookKeys))).toBe('AccessDeniedException');
    // The master key of merchant webhook secrets: the functions that sign or show them.
    expect(await outcome(asFunction('deliver-webhooks', merchantWebhookKey))).toBe('sent');
    expect(await outcome(asFunction('process-payment-events', merchantWebhookKey))).toBe(
      'AccessDeniedException',
    );
    expect(grantsOf('create-transfer').secrets).toEqual(['paystackSecretKey']);
    expect(grantsOf('list-banks').secrets).toEqual([]);
    // Outside an invocation nothing is checked.
    expect(await outcome(apiKeyPepper())).toBe('sent');
  });

  it('lets create-transfer write the event of a transfer settled by its first answer', () => {
    expect(grantsOf('create-transfer').tables.get('events')).toEqual(
      expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']),
    );
  });
});
