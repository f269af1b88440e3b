import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 250;

/** Full-jitter exponential backoff before retry `attempt` (1-based) of a conflicted transaction. */
export function backoff(attempt: number): Promise<void> {
  return sleep(Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(attempt, 8)));
}

/**
 * Whether a transaction was cancelled only because another transaction touched the same items at
 * the same time (DynamoDB does not retry these itself): no condition failed, so retrying is safe.
 */
export function isOnlyConflict(error: unknown): boolean {
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
}

/** Runs a transactional write, retrying it with backoff while it is cancelled only by conflicts. */
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
