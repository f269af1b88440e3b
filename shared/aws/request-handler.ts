import '#shared/aws/node-version.ts';

/**
 * How long one attempt of a DynamoDB or SQS request may wait for its answer. Without it the SDK waits
 * up to its idle-socket default (DynamoDB's: 300 s): a connection that took the request and went
 * silent held the function until Lambda ended it (in the local runtime, for minutes). Cut, the
 * attempt is retried by the SDK on a new connection, as a reset one is: the writes are built for
 * that (a transaction's idempotency token, which the SDK fills in and keeps across its retries;
 * conditions that find a retried write already done). These calls answer in milliseconds when the
 * service is well, and in well under a second from DynamoDB Local under the bench's load.
 */
export const REQUEST_TIMEOUT_MS = 5_000;

/**
 * The HTTP settings of every AWS SDK client of this process: local endpoints are plain HTTP, kept
 * alive like HTTPS, with room for the consumer's parallel batches. Agent options rather than an
 * `http.Agent`: the SDK then loads `node:http` only when a plain-HTTP endpoint is first called,
 * never on AWS. A module of its own, so that a function with only an SQS client (the partner
 * webhook) does not also load and make the DynamoDB one.
 */
export const requestHandler = {
  httpAgent: { keepAlive: true, maxSockets: 64 },
  requestTimeout: REQUEST_TIMEOUT_MS,
  // Without it a request past its timeout is only logged as a warning (the SDK's compatibility).
  throwOnRequestTimeout: true,
};
