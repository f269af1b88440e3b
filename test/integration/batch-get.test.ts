import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getItems } from '#shared/aws/batch-get.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';

describe('getItems (one BatchGetItem over several tables)', () => {
  it('answers each read its item in the order asked (undefined where none), merging what came before and after unprocessed keys were asked again', async () => {
    const id = `evt_batch_${Date.now()}`;
    const event = { merchant_id: 'mer_batch_get', event_id: id, id, type: 'payment.received' };
    const endpoint = { merchant_id: 'mer_batch_get', endpoint_id: `we_${id}`, url: 'https://example.com/' };
    await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
    await dynamo.send(new PutCommand({ TableName: tableName('webhookEndpoints'), Item: endpoint }));
    // The first call is answered as DynamoDB does under throttling: the events table read, the
    // endpoints table's keys left unprocessed.
    let calls = 0;
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        calls++;
        if (calls > 1) return next(args);
        const { RequestItems } = args.input as { RequestItems: Record<string, unknown> };
        const { [tableName('webhookEndpoints')]: later, ...now } = RequestItems;
        const answered = await next({
          ...args,
          input: { ...args.input, RequestItems: now } as typeof args.input,
        });
        const UnprocessedKeys = { [tableName('webhookEndpoints')]: later };
        return { ...answered, output: { ...answered.output, UnprocessedKeys } as typeof answered.output };
      },
      { step: 'initialize', name: 'throttleFirstBatchGet' },
    );
    let items: Awaited<ReturnType<typeof getItems>>;
    const eventRead = {
      TableName: tableName('events'),
      Key: { merchant_id: 'mer_batch_get', event_id: id },
      ConsistentRead: true,
    };
    try {
      items = await getItems([
        {
          TableName: tableName('webhookEndpoints'),
          Key: { merchant_id: 'mer_batch_get', endpoint_id: endpoint.endpoint_id },
        },
        eventRead,
        {
          TableName: tableName('events'),
          Key: { merchant_id: 'mer_batch_get', event_id: `${id}_none` },
          ConsistentRead: true,
        },
        // The same key twice (DynamoDB refuses that in one request): asked once, answered twice.
        eventRead,
      ]);
    } finally {
      dynamo.middlewareStack.remove('throttleFirstBatchGet');
    }
    expect(calls).toBe(2);
    expect(items).toEqual([endpoint, event, undefined, event]);
  });
});
