import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type MockInstance,
  vi,
} from 'vitest';

// On Lambda (AWS_LAMBDA_FUNCTION_NAME set) each consumer counts the items it returns as failed in a
// CloudWatch Embedded Metric Format line: the metric the FailedItems alarms watch. Its own file:
// the configuration is read once, when the shared modules are first imported.
const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
let write: MockInstance<(chunk: unknown) => boolean>;
beforeAll(() => {
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'naira-test-consumer';
});
beforeEach(() => {
  write = vi.spyOn(process.stdout, 'write') as unknown as MockInstance<(chunk: unknown) => boolean>;
});
afterEach(() => write.mockRestore());
afterAll(() => {
  if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
});

/** The EMF records written to stdout since the spy was set. */
function emfRecords(): Record<string, unknown>[] {
  return write.mock.calls
    .map(([chunk]) => String(chunk))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const sqsBatch = (...bodies: string[]) =>
  ({
    Records: bodies.map((body, i) => ({ messageId: `m${i}`, body, attributes: {}, messageAttributes: {} })),
  }) as unknown as SQSEvent;

const expectedRecord = (count: number) => ({
  _aws: {
    Timestamp: expect.any(Number),
    CloudWatchMetrics: [
      {
        Namespace: 'NairaPay',
        Dimensions: [['FunctionName']],
        Metrics: [{ Name: 'FailedItems', Unit: 'Count' }],
      },
    ],
  },
  FunctionName: 'naira-test-consumer',
  FailedItems: count,
});

describe('failed items of queue and stream consumers, as a CloudWatch metric', () => {
  it('process-payment-events counts every item it returns as failed', async () => {
    const { handler } = await import('#functions/process-payment-events.ts');
    const response = await handler(sqsBatch('not json', JSON.stringify({ type: 'Nonsense' })));
    expect(response.batchItemFailures).toHaveLength(2);
    expect(emfRecords()).toEqual([expectedRecord(2)]);
  });

  it('process-payment-events writes nothing for a batch without failures', async () => {
    const { handler } = await import('#functions/process-payment-events.ts');
    expect((await handler(sqsBatch())).batchItemFailures).toHaveLength(0);
    expect(emfRecords()).toEqual([]);
  });

  it('deliver-webhooks counts its failed deliveries', async () => {
    const { handler } = await import('#functions/deliver-webhooks.ts');
    const response = await handler(sqsBatch('{', '{'));
    expect(response.batchItemFailures).toHaveLength(2);
    expect(emfRecords()).toEqual([expectedRecord(2)]);
  });

  it('fan-out-events counts the record it stops at', async () => {
    // A failure that may pass (DynamoDB unavailable): the record is reported, to come again.
    vi.doMock('#shared/merchant-webhooks/fan-out.ts', async (importOriginal) => ({
      ...(await importOriginal<typeof import('#shared/merchant-webhooks/fan-out.ts')>()),
      recordFanOut: async () => {
        throw new Error('DynamoDB unavailable');
      },
    }));
    const { handler } = await import('#functions/fan-out-events.ts');
    const stream = {
      Records: [
        {
          eventName: 'INSERT',
          dynamodb: {
            SequenceNumber: '7',
            NewImage: { merchant_id: { S: 'mer_1' }, event_id: { S: 'evt_1' } },
          },
        },
      ],
    } as unknown as DynamoDBStreamEvent;
    expect((await handler(stream)).batchItemFailures).toEqual([{ itemIdentifier: '7' }]);
    expect(emfRecords()).toEqual([expectedRecord(1)]);
  });
});
