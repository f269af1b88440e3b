import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { countFailedItems } from '#shared/metrics.ts';
import { traceKeys } from '#shared/partner-webhooks/trace.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import {
  paymentEntryId,
  paymentReference,
  receivePayments,
  receiveRejectedPayment,
} from '#shared/payments/credit.ts';
import { keepUnmatched } from '#shared/payments/unmatched.ts';
import { receiveTransferSettled } from '#shared/transfers/settle.ts';

type Queued<T> = { record: SQSRecord; event: QueuedEvent & T };

/**
 * The SQS consumer of the partners' domain events: credits payments, records refused ones,
 * settles transfers, and keeps for operators what a partner sent that cannot be acted on,
 * answering with partial batch failures so only the messages that failed come back (and reach the
 * DLQ after a few receives). A batch's payments are credited together: one group per merchant, and
 * the groups of all its merchants in one ledger transaction where possible. It never sees a
 * partner's own payload. Each line
 * about a message carries `traceKeys` (the webhook request that queued it, the partner's delivery
 * and payment ids) and, for a payment, its ledger entry id and transaction reference.
 */
export const handler = async (batch: SQSEvent, _context?: Context): Promise<SQSBatchResponse> => {
  logger.resetKeys();
  const failed: string[] = [];
  const fail = (record: SQSRecord, reason: string, error?: unknown, event?: QueuedEvent) => {
    failed.push(record.messageId);
    logger.error(reason, {
      message_id: record.messageId,
      ...(event ? traceOf(event) : {}),
      error: error instanceof Error ? error.message : String(error),
    });
  };
  const payments: Queued<PaymentReceived>[] = [];
  const others: { record: SQSRecord; event: QueuedEvent; work: () => Promise<void> }[] = [];
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
        others.push({ record, event, work: () => receiveRejectedPayment(event) });
        break;
      case 'TransferSettled':
        others.push({ record, event, work: () => receiveTransferSettled(event) });
        break;
      case 'DeliveryUnusable':
        others.push({ record, event, work: () => keepUnmatched(event, event.reason) });
        break;
      default:
        fail(record, 'unknown event type', (event as { type?: unknown }).type);
    }
  }

  const working = others.map(async ({ record, event, work }) => {
    try {
      await work();
      logger.info('event processed', {
        message_id: record.messageId,
        type: event.type,
        ...traceOf(event),
        // A transfer's verdict as the partner gave it (what the transfer became is in its own lines).
        ...(event.type === 'TransferSettled' ? { verdict: event.outcome.status } : {}),
      });
    } catch (error) {
      fail(record, 'event failed', error, event);
    }
  });
  const outcomes = await receivePayments(payments.map(({ event }) => event));
  outcomes.forEach((outcome, i) => {
    const { record, event } = payments[i] as Queued<PaymentReceived>;
    if (outcome.status === 'rejected') {
      fail(record, 'payment failed', outcome.reason, event);
      return;
    }
    // The ledger entry and transaction only of a payment credited (now or before): a held or
    // unmatched one has none. Its amount and account: what a merchant's "my customer paid" names.
    const { entry_id, reference, ...trace } = traceOf(event);
    const posted = outcome.value === 'credited' || outcome.value === 'duplicate';
    logger.info('payment processed', {
      message_id: record.messageId,
      ...trace,
      ...(posted ? { entry_id, reference } : {}),
      outcome: outcome.value,
      amount: event.amount,
      account_number: event.account_number,
    });
  });
  await Promise.all(working);
  countFailedItems(failed.length);
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};

/** A message's trace keys; for a payment also its ledger entry id and its transaction's reference. */
function traceOf(event: QueuedEvent): Record<string, string | undefined> {
  if (event.type !== 'PaymentReceived') return traceKeys(event);
  return { ...traceKeys(event), entry_id: paymentEntryId(event), reference: paymentReference(event) };
}
