import '#shared/aws/node-version.ts';

/**
 * The HTTP settings of every AWS SDK client of this process: local endpoints are plain HTTP, kept
 * alive like HTTPS, with room for the consumer's parallel batches. Agent options rather than an
 * `http.Agent`: the SDK then loads `node:http` only when a plain-HTTP endpoint is first called,
 * never on AWS. A module of its own, so that a function with only an SQS client (the partner
 * webhook) does not also load and make the DynamoDB one.
 */
export const requestHandler = { httpAgent: { keepAlive: true, maxSockets: 64 } };
