import { SQSClient } from '@aws-sdk/client-sqs';
import { requestHandler } from '#shared/aws/request-handler.ts';
import { config } from '#shared/config.ts';

/**
 * The SQS client of this process. A module of its own, imported only by the modules that send (the
 * partner webhook's queueing, merchant webhook deliveries, dead letters): it is made at import, so
 * any function importing this module carries the whole client (about 24 KB and 5-8 ms of import).
 */
export const sqs = new SQSClient({
  region: config.region,
  endpoint: config.sqsEndpoint,
  requestHandler: requestHandler(),
});
