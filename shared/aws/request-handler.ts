import '#shared/aws/node-version.ts';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions } from '@smithy/types';
import { awsAttemptTimeout, OutOfTime } from '#shared/deadline.ts';

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
 * Each attempt waits at most `REQUEST_TIMEOUT_MS`, and never past the invocation's deadline
 * (`awsAttemptTimeout`); an attempt with no time left is not made (`OutOfTime`, which the SDK does
 * not retry), so a slow DynamoDB leaves the handler time to answer in its own words.
 */
class DeadlineBoundHandler extends NodeHttpHandler {
  override handle(request: Parameters<NodeHttpHandler['handle']>[0], options: HttpHandlerOptions = {}) {
    const timeoutMs = awsAttemptTimeout(REQUEST_TIMEOUT_MS);
    if (timeoutMs === undefined)
      return Promise.reject(new OutOfTime('no time left before the function ends to call AWS'));
    return super.handle(request, { ...options, requestTimeout: timeoutMs });
  }
}

/**
 * The HTTP handler of an AWS SDK client of this process (one each): local endpoints are plain
 * HTTP, kept alive like HTTPS, with room for the consumer's parallel batches. Agent options rather
 * than an `http.Agent`: `node:http` is then loaded only when a plain-HTTP endpoint is first called,
 * never on AWS. A module of its own, so that a function with only an SQS client (the partner
 * webhook) does not also load and make the DynamoDB one.
 */
export function requestHandler(): NodeHttpHandler {
  return new DeadlineBoundHandler({
    httpAgent: { keepAlive: true, maxSockets: 64 },
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Without it a request past its timeout is only logged as a warning (the SDK's compatibility).
    throwOnRequestTimeout: true,
  });
}
