import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { countFailedItems } from '#shared/metrics.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { receivePayments, receiveRejectedPayment } from '#shared/payments/credit.ts';
import { receiveTransferSettled } from '#shared/transfers/settle.ts';

type Queued<T> = { record: SQSRecord; event: QueuedEvent & T };

/**
 * The SQS consumer of the partners' domain events: credits payments, records refused ones, and
 * settles transfers, answering with partial batch failures so only the messages that failed come
 * back (and reach the DLQ after a few receives). A batch's payments are credited together, one
 * ledger transaction per merchant where possible. It never sees a partner's own payload.
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
  const others: { record: SQSRecord; work: () => Promise<void> }[] = [];
  for (const record of batch.Records) {
    let event: QueuedEvent;
    try {
      event = JSON.parse(record.body) as QueuedEvent;
    } catch (error) {
      fail(record, 'unreadable message', error);
      continue;
    }
    switch (event.type) {
      case 'PaymentReceived':
        payments.push({ record, event });
        break;
      case 'PaymentRejected':
        others.push({ record, work: () => receiveRejectedPayment(event) });
        break;
      case 'TransferSettled':
        others.push({ record, work: () => receiveTransferSettled(event) });
        break;
      default:
        fail(record, 'unknown event type', (event as { type?: unknown }).type);
    }
  }

  const working = others.map(async ({ record, work }) => {
    try {
      await work();
      logger.info('event processed', { message_id: record.messageId });
    } catch (error) {
      fail(record, 'event failed', error);
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
      delivery_id: event.delivery_id,
      partner: event.partner,
      payment_id: event.payment_id,
      outcome: outcome.value,
    });
  });
  await Promise.all(working);
  countFailedItems(failed.length);
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};
