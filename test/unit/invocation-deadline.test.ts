import { describe, expect, it } from 'vitest';
import {
  ANSWER_RESERVE_MS,
  awsAttemptTimeout,
  CONFIRM_GRACE_MS,
  callTimeout,
  FINAL_ANSWER_MS,
  MIN_AWS_ATTEMPT_MS,
  MIN_CALL_MS,
  setInvocationDeadline,
} from '#shared/deadline.ts';

/** Runs `check` in an async context of its own, as an invocation has: a deadline set there stays there. */
const inInvocation = <T>(check: () => T) =>
  new Promise<T>((resolve, reject) =>
    setImmediate(() => {
      try {
        resolve(check());
      } catch (error) {
        reject(error);
      }
    }),
  );

describe('the outside calls of one invocation end in time for it to answer', () => {
  const now = 1_000_000;

  it('gives a call the configured timeout where no deadline is set (a CLI, a test)', async () => {
    expect(await inInvocation(() => callTimeout(5_000, { now: now }))).toBe(5_000);
    // Even one shorter than a useful call: the configuration is the caller's to choose.
    expect(await inInvocation(() => callTimeout(300, { now: now }))).toBe(300);
  });

  it('cuts a call to the time left before the reserve, and starts none with too little left', async () => {
    const left = await inInvocation(() => {
      // 28 s of the function left: calls end 3 s before it.
      setInvocationDeadline(28_000, now);
      return [
        callTimeout(5_000, { now: now }),
        callTimeout(5_000, { now: now + 23_000 }),
        callTimeout(5_000, { now: now + 28_000 - ANSWER_RESERVE_MS - MIN_CALL_MS }),
        callTimeout(5_000, { now: now + 28_000 - ANSWER_RESERVE_MS - MIN_CALL_MS + 1 }),
        callTimeout(5_000, { now: now + 30_000 }),
      ];
    });
    expect(left).toEqual([5_000, 2_000, MIN_CALL_MS, undefined, undefined]);
  });

  it('lets a call that confirms a refusal use part of the reserve', async () => {
    const [plain, confirming] = await inInvocation(() => {
      setInvocationDeadline(ANSWER_RESERVE_MS + 200, now);
      return [callTimeout(5_000, { now }), callTimeout(5_000, { now, graceMs: CONFIRM_GRACE_MS })];
    });
    expect([plain, confirming]).toEqual([undefined, 200 + CONFIRM_GRACE_MS]);
  });

  it('keeps each invocation’s deadline to its own async work', async () => {
    const [short, long, none] = await Promise.all([
      inInvocation(() => {
        setInvocationDeadline(ANSWER_RESERVE_MS + 1_000, now);
        return callTimeout(5_000, { now: now });
      }),
      inInvocation(() => {
        setInvocationDeadline(60_000, now);
        return callTimeout(5_000, { now: now });
      }),
      inInvocation(() => callTimeout(5_000, { now: now })),
    ]);
    expect([short, long, none]).toEqual([1_000, 5_000, 5_000]);
  });

  it('lets DynamoDB and SQS attempts record answers in the reserve, never in the last moments', async () => {
    const left = await inInvocation(() => {
      setInvocationDeadline(10_000, now);
      return [
        awsAttemptTimeout(5_000, now),
        // Past the outside calls' deadline: still time to record what they answered.
        awsAttemptTimeout(5_000, now + 10_000 - ANSWER_RESERVE_MS),
        awsAttemptTimeout(5_000, now + 10_000 - FINAL_ANSWER_MS - MIN_AWS_ATTEMPT_MS),
        awsAttemptTimeout(5_000, now + 10_000 - FINAL_ANSWER_MS - MIN_AWS_ATTEMPT_MS + 1),
        awsAttemptTimeout(5_000, now + 11_000),
      ];
    });
    expect(left).toEqual([
      5_000,
      ANSWER_RESERVE_MS - FINAL_ANSWER_MS,
      MIN_AWS_ATTEMPT_MS,
      undefined,
      undefined,
    ]);
    // Outside an invocation (a CLI, a consumer, a test): the configured timeout.
    expect(await inInvocation(() => awsAttemptTimeout(5_000, now))).toBe(5_000);
  });
});
