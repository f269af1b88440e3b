import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { EventRecord } from '#shared/events/events.ts';
import { logger } from '#shared/logger.ts';
import type { EndpointRecord } from '#shared/merchant-webhooks/endpoints.ts';
import { listEndpoints } from '#shared/merchant-webhooks/endpoints.ts';
import { fanOut } from '#shared/merchant-webhooks/fan-out.ts';
import { countFailedItems } from '#shared/metrics.ts';

/**
 * The events table's stream consumer: each new event becomes a delivery to every endpoint of its
 * merchant that wants it. A batch's events are fanned out together (each merchant's endpoints read
 * once per batch); the first record in stream order that failed is reported, so it and those after
 * it come again (fan-out is idempotent: a repeated one changes nothing).
 */
export const handler = async (stream: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  logger.resetKeys();
  const endpoints = new Map<string, Promise<EndpointRecord[]>>();
  const endpointsOf = (merchantId: string) => {
    const read = endpoints.get(merchantId) ?? listEndpoints(merchantId);
    endpoints.set(merchantId, read);
    return read;
  };
  const outcomes = await Promise.allSettled(
    stream.Records.map(async (record) => {
      if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) return;
      const event = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as EventRecord;
      await fanOut(event, endpointsOf);
    }),
  );
  const failedAt = outcomes.findIndex((outcome) => outcome.status === 'rejected');
  if (failedAt < 0) return { batchItemFailures: [] };
  const failed = outcomes[failedAt] as PromiseRejectedResult;
  const sequence = stream.Records[failedAt]?.dynamodb?.SequenceNumber ?? '';
  logger.error('fan-out failed', { sequence, error: String(failed.reason) });
  countFailedItems(1);
  return { batchItemFailures: [{ itemIdentifier: sequence }] };
};
