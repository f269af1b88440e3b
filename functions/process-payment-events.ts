import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { receivePayment, receiveTransferVerdict } from '#shared/payments/receive.ts';
import type { QueuedEvent } from '#shared/webhooks/events.ts';

const processor = new BatchProcessor(EventType.SQS);

/** One queued partner event; throwing fails this message only (it is retried, then dead-lettered). */
async function processRecord(record: SQSRecord): Promise<void> {
  const event = JSON.parse(record.body) as QueuedEvent;
  // Records run in parallel: context goes on each line, not on the shared logger.
  const context = { webhook_id: event.webhook_id, message_id: record.messageId };
  if (event.type === 'payment.received') {
    const outcome = await receivePayment(event);
    logger.info('payment processed', { ...context, session_id: event.data.session_id, outcome });
  } else if (event.type === 'transfer.success' || event.type === 'transfer.failed') {
    await receiveTransferVerdict(event);
    logger.info('transfer verdict processed', { ...context, type: event.type });
  } else {
    throw new Error(`unknown event type ${String((event as { type?: unknown }).type)}`);
  }
}

/** The SQS consumer: credits payments and settles transfers, with partial batch responses. */
export const handler = async (event: SQSEvent, context: Context) => {
  logger.resetKeys();
  return processPartialResponse(event, processRecord, processor, { context, throwOnFullBatchFailure: false });
};
