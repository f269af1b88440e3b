import { createServer, type ServerResponse } from 'node:http';
import { createRequestHandler } from 'local-aws-sqs';
import { QueueJournal, type StoredMessage } from '#infra/local/sqs-journal.ts';

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

type SqsService = ReturnType<typeof createRequestHandler>['service'];
type Queue = SqsService['Queues'][number];

/**
 * Starts the `local-aws-sqs` server (SQS JSON protocol, visibility timeouts, DLQ redrive). With a
 * `dataDir`, its messages are durable: every change is journaled under `<dataDir>/sqs/` and on disk
 * before the server answers (so a 200 of SendMessage survives a `kill -9`), and the messages are
 * back in their queues, DLQs included, once the queues are created again after a restart. A
 * message received but not yet deleted at a crash is delivered again (at least once, as SQS).
 */
export async function startLocalSqs(options: { port: number; dataDir?: string }): Promise<LocalSqs> {
  const { service, requestHandler } = createRequestHandler({
    port: options.port,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  const journal = options.dataDir ? await QueueJournal.open(options.dataDir) : undefined;
  if (journal) journalQueues(service, journal);
  const server = createServer((request, response) => {
    if (journal) answerOnceDurable(response, journal);
    requestHandler(request, response).catch((error: unknown) => response.destroy(error as Error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${options.port}`,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await journal?.close();
    },
  };
}

/** Holds every answer of the server until the changes made so far are on disk. */
function answerOnceDurable(response: ServerResponse, journal: QueueJournal) {
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  response.end = ((...args: unknown[]) => {
    journal.flushed().then(
      () => end(...args),
      (error: unknown) => response.destroy(error as Error),
    );
    return response;
  }) as ServerResponse['end'];
}

/**
 * Journals the changes to every queue the server creates, and puts a queue's kept messages back
 * into it when it is created (by the bootstrap of the next start).
 */
function journalQueues(service: SqsService, journal: QueueJournal) {
  const queues = service.Queues;
  queues.push = (...created: Queue[]) => {
    const length = Array.prototype.push.apply(queues, created);
    for (const queue of created) journalQueue(queue, journal);
    return length;
  };
}

function journalQueue(queue: Queue, journal: QueueJournal) {
  const { newRecord } = queue;
  const now = Date.now();
  for (const kept of journal.messagesOf(queue.QueueName)) {
    const sentAt = Number(kept.message.attributes.SentTimestamp);
    if (sentAt + queue.MessageRetentionPeriod * 1000 <= now) {
      journal.deleted(kept.message.MessageId);
      continue;
    }
    const remaining = Math.max(0, sentAt + kept.delaySeconds * 1000 - now) / 1000;
    newRecord(structuredClone(kept.message), remaining);
  }
  // Every message added (sent, moved to the DLQ, moved back) goes through `newRecord`.
  queue.newRecord = (message: Record<string, unknown>, delay?: number) => {
    const record = newRecord(message, delay);
    const delaySeconds = delay === undefined || Number.isNaN(delay) ? queue.DelaySeconds : delay;
    journal.added(queue.QueueName, message as StoredMessage, delaySeconds);
    return record;
  };
  const receive = queue.receive.bind(queue);
  queue.receive = async (input) => {
    const messages = (await receive(input)) as StoredMessage[];
    for (const message of messages) {
      journal.received(message.MessageId, Number(message.attributes.ApproximateReceiveCount));
    }
    return messages;
  };
  const remove = queue.delete.bind(queue);
  queue.delete = (receiptHandle: string) => {
    const deleted = remove(receiptHandle);
    journal.deleted(messageIdOf(receiptHandle));
    return deleted;
  };
  // Purge and DeleteQueue both clear the records.
  const clear = queue.clearRecords.bind(queue);
  queue.clearRecords = () => {
    clear();
    journal.cleared(queue.QueueName);
  };
}

/** The message id in a receipt handle of local-aws-sqs (base64 of a uuid and a JSON object). */
function messageIdOf(receiptHandle: string): string {
  const decoded = Buffer.from(receiptHandle, 'base64').toString('utf8');
  return (JSON.parse(decoded.slice(decoded.indexOf('{'))) as { MessageId: string }).MessageId;
}
