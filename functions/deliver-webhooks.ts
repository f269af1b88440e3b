import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { deliver } from '#shared/merchant-webhooks/deliver.ts';
import type { DeliveryMessage } from '#shared/merchant-webhooks/deliveries.ts';
import { countFailedItems } from '#shared/metrics.ts';

/**
 * The deliveries queue's consumer: one attempt per message, all of a batch at once, so a slow
 * endpoint delays no other attempt of its batch; the batch ends with its slowest attempt (10 s at
 * most), and until then this consumer takes no other batch.
 */
export const handler = async (batch: SQSEvent): Promise<SQSBatchResponse> => {
  logger.resetKeys();
  const failed: string[] = [];
  await Promise.all(
    batch.Records.map(async (record) => {
      try {
        await deliver(JSON.parse(record.body) as DeliveryMessage);
      } catch (error) {
        failed.push(record.messageId);
        logger.error('delivery failed', { message_id: record.messageId, error: String(error) });
      }
    }),
  );
  countFailedItems(failed.length);
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};
