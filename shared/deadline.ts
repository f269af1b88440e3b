import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The moment (epoch ms) the invocation's function ends: its outside calls (the partner's, and AWS
 * calls made without an SDK client, `shared/aws/service.ts`) end `ANSWER_RESERVE_MS` before it, its
 * DynamoDB and SQS attempts `FINAL_ANSWER_MS` before it. Kept per invocation's chain of async work
 * (the local runtime runs many invocations in one process). A request's handler chains several
 * calls (bank list, name enquiry, recipient, transfer, verify; or a key's Cognito and API Gateway
 * calls), each bounded on its own, and their sum can outlast the function: a function killed
 * mid-chain answers API Gateway's bodiless 5xx, for a transfer after its debit. With a deadline, a
 * call is cut short, or not started, in time for the handler to answer in its own words (a transfer
 * answered pending, a name enquiry 503). (`node:async_hooks` is loaded by Node's own start-up.)
 */
const deadlines = new AsyncLocalStorage<number>();

/** Time kept after the outside calls: to record their answers and respond. */
export const ANSWER_RESERVE_MS = 3_000;

/**
 * What of the reserve a call may use that confirms a refusal the partner just gave (verify after a
 * 4xx): cut, it would leave a refused transfer pending instead of failed.
 */
export const CONFIRM_GRACE_MS = 1_000;

/** A call with less time than this is not started: it could only be cut off. */
export const MIN_CALL_MS = 500;

/**
 * Time kept after the invocation's last DynamoDB or SQS attempt (`shared/aws/request-handler.ts`):
 * to answer in the handler's own words (a transfer answered pending, say) rather than be killed.
 */
export const FINAL_ANSWER_MS = 500;

/** A DynamoDB or SQS attempt with less time than this is not started (they answer in milliseconds). */
export const MIN_AWS_ATTEMPT_MS = 100;

/**
 * An AWS SDK call not attempted (again) for want of time before the function's end: the SDK does not
 * retry it (its name is no transient error's), and the handler answers as for any failed call.
 */
export class OutOfTime extends Error {
  override name = 'OutOfTime';
}

/**
 * Runs `work`, an invocation's, with the function's end `remainingMs` from now (Lambda's
 * `getRemainingTimeInMillis`): in its async work, outside calls end `ANSWER_RESERVE_MS` before it.
 * Only `work` sees it: set with `enterWith`, it stayed with whatever awaited the handler (the bench's
 * and the tests' in-process calls), whose later DynamoDB calls it then cut (`awsAttemptTimeout`).
 */
export function withInvocationDeadline<T>(remainingMs: number, work: () => T, now = Date.now()): T {
  return deadlines.run(now + remainingMs, work);
}

/**
 * Runs `work` within the time of the invocation `context` belongs to (Lambda's; none without one,
 * a CLI's or a test's direct call): `withInvocationDeadline` of what it has left.
 */
export function withinInvocation<T>(
  context: { getRemainingTimeInMillis?: () => number } | undefined,
  work: () => T,
): T {
  return typeof context?.getRemainingTimeInMillis === 'function'
    ? withInvocationDeadline(context.getRemainingTimeInMillis(), work)
    : work();
}

/**
 * What is left of the invocation's time for outside calls (less `ANSWER_RESERVE_MS`, never below
 * 0); undefined outside an invocation.
 */
export function partnerTimeLeft(now = Date.now()): number | undefined {
  const end = deadlines.getStore();
  return end === undefined ? undefined : Math.max(0, end - ANSWER_RESERVE_MS - now);
}

/**
 * How long the next outside call may take: `timeoutMs`, or less when the invocation's deadline
 * (plus `graceMs`, see `CONFIRM_GRACE_MS`) is nearer; undefined when too little is left to start
 * one (`MIN_CALL_MS`), which a partner's adapter answers as `PartnerNotCalled`.
 */
export function callTimeout(timeoutMs: number, { now = Date.now(), graceMs = 0 } = {}): number | undefined {
  const end = deadlines.getStore();
  if (end === undefined) return timeoutMs;
  const left = end - ANSWER_RESERVE_MS + graceMs - now;
  return left < Math.min(MIN_CALL_MS, timeoutMs) ? undefined : Math.min(timeoutMs, left);
}

/**
 * How long the next attempt of a DynamoDB or SQS call may wait for its answer: `timeoutMs`, or less
 * when the function's end (less `FINAL_ANSWER_MS`) is nearer; undefined when too little is left to
 * start one (`MIN_AWS_ATTEMPT_MS`). These calls record what the outside calls answered, so they
 * may use `ANSWER_RESERVE_MS`, but not the function's last moments: the SDK's attempts (3, or 4
 * with its 2026 retry defaults) of up to 5 s each would otherwise outlast a 10 s function, and the
 * caller get API Gateway's bodiless 5xx.
 */
export function awsAttemptTimeout(timeoutMs: number, now = Date.now()): number | undefined {
  const end = deadlines.getStore();
  if (end === undefined) return timeoutMs;
  const left = end - FINAL_ANSWER_MS - now;
  return left < MIN_AWS_ATTEMPT_MS ? undefined : Math.min(timeoutMs, left);
}
