/**
 * Table streams and the functions they drive (Lambda event source mappings on AWS, the local
 * runtime's stream poller locally), read by the CDK stack and the local runtime alike.
 */
import type { Access } from '#shared/definitions/routes.ts';
import type { TableName } from '#shared/definitions/tables.ts';

export interface StreamDefinition {
  readonly table: TableName;
  readonly consumer: string;
  readonly consumerAccess: Access;
  readonly consumerTimeoutSeconds: number;
  readonly batchSize: number;
}

export const STREAMS: readonly StreamDefinition[] = [
  {
    // Every new event is fanned out to the merchant's endpoints as deliveries.
    table: 'events',
    consumer: 'fan-out-events',
    consumerAccess: {
      read: ['webhookEndpoints'],
      write: ['webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
    },
    consumerTimeoutSeconds: 30,
    batchSize: 25,
  },
];
