import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The moment (epoch ms) by which an invocation's outside calls (the partner's, and AWS calls made
 * without an SDK client, `shared/aws/service.ts`) must have ended, kept per invocation's chain of
 * async work (the local runtime runs many invocations in one process). A request's handler chains
 * several calls (bank list, name enquiry, recipient, transfer, verify; or a key's Cognito and API
 * Gateway calls), each bounded on its own, and their sum can outlast the function: a function killed
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
 * From here on in this invocation's async work, outside calls end `ANSWER_RESERVE_MS` before the
 * function's own end, `remainingMs` from now (Lambda's `getRemainingTimeInMillis`).
 */
export function setInvocationDeadline(remainingMs: number, now = Date.now()): void {
  deadlines.enterWith(now + remainingMs - ANSWER_RESERVE_MS);
}

/**
 * How long the next outside call may take: `timeoutMs`, or less when the invocation's deadline
 * (plus `graceMs`, see `CONFIRM_GRACE_MS`) is nearer; undefined when too little is left to start
 * one (`MIN_CALL_MS`), which a partner's adapter answers as `PartnerNotCalled`.
 */
export function callTimeout(timeoutMs: number, { now = Date.now(), graceMs = 0 } = {}): number | undefined {
  const deadline = deadlines.getStore();
  if (deadline === undefined) return timeoutMs;
  const left = deadline + graceMs - now;
  return left < Math.min(MIN_CALL_MS, timeoutMs) ? undefined : Math.min(timeoutMs, left);
}
