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
 * merchant that wants it. Records are handled in order, each merchant's endpoints read once per
 * batch; the first that fails is reported, so it and those after it come again (fan-out is
 * idempotent). One at a time on purpose: fanned out concurrently, a batch's writes competed with the
 * credits for DynamoDB (the bench's credits fell from 165/s to 93/s, and deliveries did not rise).
 */
export const handler = async (stream: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  logger.resetKeys();
  const endpoints = new Map<string, Promise<EndpointRecord[]>>();
  const endpointsOf = (merchantId: string) => {
    const read = endpoints.get(merchantId) ?? listEndpoints(merchantId);
    endpoints.set(merchantId, read);
    return read;
  };
  for (const record of stream.Records) {
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) continue;
    try {
      const event = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as EventRecord;
      await fanOut(event, endpointsOf);
    } catch (error) {
      logger.error('fan-out failed', { sequence: record.dynamodb.SequenceNumber, error: String(error) });
      countFailedItems(1);
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
};
