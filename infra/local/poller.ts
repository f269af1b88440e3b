import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { localLambdaContext } from '#infra/local/lambda-context.ts';
import { localCredentials } from '#infra/local/process.ts';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface PollerOptions {
  endpoint: string;
  queueUrl: string;
  handler: SqsHandler;
  batchSize: number;
  /** Long-poll wait; short so that stopping is quick. */
  waitSeconds?: number;
  /** Batches in flight at once, each received, handled and deleted on its own (default 1). */
  concurrency?: number;
  onError?: (error: unknown) => void;
}

export interface Poller {
  stop(): Promise<void>;
}

function toRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

/**
 * Drives an SQS consumer as Lambda's event source mapping does: long-polls, invokes the handler with
 * a real SQS batch event, deletes only the messages it did not report as failed (partial batch
 * responses). Failed messages reappear after the visibility timeout and go to the DLQ by redrive.
 */
export async function startPoller(options: PollerOptions): Promise<Poller> {
  const client = new SQSClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  const { Attributes: attributes } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: options.queueUrl,
      AttributeNames: ['QueueArn', 'VisibilityTimeout'],
    }),
  );
  const queueArn = attributes?.QueueArn ?? '';
  // Passed on every receive, as the queue's own setting: SQS and the local-aws-sqs the lock file
  // pins (2.0.2; its receive falls back to the queue's setting) both use it when none is given, so
  // this only spells out what the poller relies on.
  const visibilityTimeout = Number(attributes?.VisibilityTimeout ?? 30);
  let running = true;

  const pollOnce = async () => {
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: options.batchSize,
        WaitTimeSeconds: options.waitSeconds ?? 1,
        VisibilityTimeout: visibilityTimeout,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    // One record per message, with its latest receipt handle: the local server's long poll can hand
    // out a message again within the same poll once its visibility timeout has passed.
    const latest = new Map((received.Messages ?? []).map((message) => [message.MessageId, message]));
    const messages = [...latest.values()];
    if (messages.length === 0) return;
    const event: SQSEvent = { Records: messages.map((message) => toRecord(message, queueArn)) };
    let failed: Set<string>;
    try {
      const response = await options.handler(
        event,
        localLambdaContext('consumer', messages[0]?.MessageId ?? 'batch', 30_000),
      );
      failed = new Set(response?.batchItemFailures.map((failure) => failure.itemIdentifier) ?? []);
    } catch (error) {
      // A handler that throws fails its whole batch, as on Lambda.
      options.onError?.(error);
      return;
    }
    const done = event.Records.filter((record) => !failed.has(record.messageId));
    if (done.length === 0) return;
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((record, i) => ({ Id: String(i), ReceiptHandle: record.receiptHandle })),
      }),
    );
  };

  const loop = async () => {
    while (running) {
      try {
        await pollOnce();
      } catch (error) {
        if (!running) break;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
  const loops = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, loop);

  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      client.destroy();
    },
  };
}
