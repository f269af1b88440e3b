import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { EventRecord } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import { fanOut } from '#shared/merchant-webhooks/fan-out.ts';
import { countFailedItems } from '#shared/metrics.ts';

/**
 * The events table's stream consumer: each new event becomes a delivery to every endpoint of its
 * merchant that wants it. Records are handled in order; the first that fails is reported, so it
 * and those after it come again (fan-out is idempotent).
 */
export const handler = async (stream: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  logger.resetKeys();
  for (const record of stream.Records) {
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) continue;
    try {
      await fanOut(unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as EventRecord);
    } catch (error) {
      logger.error('fan-out failed', { sequence: record.dynamodb.SequenceNumber, error: String(error) });
      countFailedItems(1);
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
};
