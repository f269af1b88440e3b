import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { receivePayments, receiveTransferVerdict } from '#shared/payments/receive.ts';
import type { PaymentReceived, QueuedEvent, TransferSettled } from '#shared/webhooks/events.ts';

type Queued<T> = { record: SQSRecord; event: QueuedEvent & T };

/**
 * The SQS consumer: credits payments and settles transfers, answering with partial batch failures
 * so only the messages that failed come back (and reach the DLQ after a few receives). A batch's
 * payments are credited together, one ledger transaction per merchant where possible.
 */
export const handler = async (batch: SQSEvent, _context?: Context): Promise<SQSBatchResponse> => {
  logger.resetKeys();
  const failed: string[] = [];
  const fail = (record: SQSRecord, reason: string, error?: unknown) => {
    failed.push(record.messageId);
    logger.error(reason, {
      message_id: record.messageId,
      error: error instanceof Error ? error.message : String(error),
    });
  };
  const payments: Queued<PaymentReceived>[] = [];
  const verdicts: Queued<TransferSettled>[] = [];
  for (const record of batch.Records) {
    let event: QueuedEvent;
    try {
      event = JSON.parse(record.body) as QueuedEvent;
    } catch (error) {
      fail(record, 'unreadable message', error);
      continue;
    }
    if (event.type === 'payment.received') payments.push({ record, event });
    else if (event.type === 'transfer.success' || event.type === 'transfer.failed')
      verdicts.push({ record, event });
    else fail(record, 'unknown event type', (event as { type?: unknown }).type);
  }

  const settling = verdicts.map(async ({ record, event }) => {
    try {
      await receiveTransferVerdict(event);
      logger.info('transfer verdict processed', { message_id: record.messageId, type: event.type });
    } catch (error) {
      fail(record, 'transfer verdict failed', error);
    }
  });
  const outcomes = await receivePayments(payments.map(({ event }) => event));
  outcomes.forEach((outcome, i) => {
    const { record, event } = payments[i] as Queued<PaymentReceived>;
    if (outcome.status === 'rejected') {
      fail(record, 'payment failed', outcome.reason);
      return;
    }
    logger.info('payment processed', {
      message_id: record.messageId,
      webhook_id: event.webhook_id,
      session_id: event.data.session_id,
      outcome: outcome.value,
    });
  });
  await Promise.all(settling);
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};
