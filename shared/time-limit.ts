/**
 * `work`'s outcome, or the error `late()` makes if `ms` pass first (`late` may also cut the work
 * short, an abort say). The timer never outlives the race. A `work` already settled wins even
 * against 0 ms: its outcome is queued before any timer's.
 */
export async function within<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
