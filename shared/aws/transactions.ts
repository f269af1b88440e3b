import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';

const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 250;

/** Full-jitter exponential backoff before retry `attempt` (1-based) of a conflicted transaction. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(attempt, 8));
  // A plain timer, not node:timers/promises: the functions that only read transactions load this too.
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether a write was refused only because a transaction touched the same items at the same time
 * (the SDK retries neither): a transaction cancelled by conflicts alone, no condition failed, or a
 * single-item write on an item a transaction was writing (`TransactionConflictException`). Nothing
 * was written, so retrying is safe.
 */
export function isOnlyConflict(error: unknown): boolean {
  if (error instanceof TransactionConflictException) return true;
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
}

/**
 * Whether a cancelled transaction met contention rather than only its own conditions: a reason other
 * than `None` and `ConditionalCheckFailed` (`TransactionConflict`, `ThrottlingError`…). Whoever tries
 * again backs off first, rather than hammer an item or a partition that is busy.
 */
export function metContention(reasons: readonly { Code?: string }[]): boolean {
  return reasons.some(({ Code = 'None' }) => Code !== 'None' && Code !== 'ConditionalCheckFailed');
}

/** Runs a write, retrying it with backoff while it is refused only by conflicts (`isOnlyConflict`). */
export async function retryingConflicts<T>(write: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isOnlyConflict(error) || attempt >= attempts) throw error;
      await backoff(attempt);
    }
  }
}
