import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * A conditional single-item write, told apart from its own echo. The SDK sends again an attempt
 * whose answer was lost or late (`REQUEST_TIMEOUT_MS`, a reset connection); when the first attempt
 * had committed, the second fails the write's own condition, though the write was done. A
 * transaction is spared this by its idempotency token; a single-item write has none.
 *
 * So on a failed condition, `ownWrite` reads the item back (consistently) and answers the write's
 * result if the item shows this very write (something only it wrote: a random id, a hash, a time
 * to the millisecond), or undefined if what the condition met is another write's. Answers the
 * write's result, or undefined when the condition refused it.
 */
export async function writtenOnce<T>(
  write: () => Promise<T>,
  ownWrite: () => Promise<T | undefined>,
): Promise<T | undefined> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return ownWrite();
  }
}

/**
 * `writtenOnce` for a write that answers nothing: whether it was written (by this call, or by the
 * SDK's retry of it that `isOwn` recognises in the item read back), false when the condition refused it.
 */
export async function wroteOnce(
  write: () => Promise<unknown>,
  isOwn: () => Promise<boolean>,
): Promise<boolean> {
  const written = await writtenOnce(
    async () => {
      await write();
      return true;
    },
    async () => (await isOwn()) || undefined,
  );
  return written ?? false;
}
