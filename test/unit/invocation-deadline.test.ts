import { describe, expect, it } from 'vitest';
import {
  ANSWER_RESERVE_MS,
  awsAttemptTimeout,
  CONFIRM_GRACE_MS,
  callTimeout,
  FINAL_ANSWER_MS,
  MIN_AWS_ATTEMPT_MS,
  MIN_CALL_MS,
  partnerTimeLeft,
  withInvocationDeadline,
} from '#shared/deadline.ts';

describe('the outside calls of one invocation end in time for it to answer', () => {
  const now = 1_000_000;

  it('gives a call the configured timeout where no deadline is set (a CLI, a test)', () => {
    expect(callTimeout(5_000, { now })).toBe(5_000);
    // Even one shorter than a useful call: the configuration is the caller's to choose.
    expect(callTimeout(300, { now })).toBe(300);
  });

  it('cuts a call to the time left before the reserve, and starts none with too little left', () => {
    // 28 s of the function left: calls end 3 s before it.
    const left = withInvocationDeadline(
      28_000,
      () => [
        callTimeout(5_000, { now }),
        callTimeout(5_000, { now: now + 23_000 }),
        callTimeout(5_000, { now: now + 28_000 - ANSWER_RESERVE_MS - MIN_CALL_MS }),
        callTimeout(5_000, { now: now + 28_000 - ANSWER_RESERVE_MS - MIN_CALL_MS + 1 }),
        callTimeout(5_000, { now: now + 30_000 }),
      ],
      now,
    );
    expect(left).toEqual([5_000, 2_000, MIN_CALL_MS, undefined, undefined]);
  });

  it('lets a call that confirms a refusal use part of the reserve', () => {
    const [plain, confirming] = withInvocationDeadline(
      ANSWER_RESERVE_MS + 200,
      () => [callTimeout(5_000, { now }), callTimeout(5_000, { now, graceMs: CONFIRM_GRACE_MS })],
      now,
    );
    expect([plain, confirming]).toEqual([undefined, 200 + CONFIRM_GRACE_MS]);
  });

  it('keeps each invocation’s deadline to its own async work, and none to the code that awaited it', async () => {
    const inOwnWork = (remainingMs: number) =>
      withInvocationDeadline(
        remainingMs,
        async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return callTimeout(5_000, { now });
        },
        now,
      );
    const [short, long] = await Promise.all([inOwnWork(ANSWER_RESERVE_MS + 1_000), inOwnWork(60_000)]);
    expect([short, long]).toEqual([1_000, 5_000]);
    // After awaiting them, this test's own calls have no deadline (set with enterWith, the last
    // one set stayed here).
    expect([callTimeout(5_000, { now }), awsAttemptTimeout(5_000, now)]).toEqual([5_000, 5_000]);
  });

  it('tells an invocation its partner time left, never below 0, and nothing outside one', () => {
    const left = withInvocationDeadline(
      ANSWER_RESERVE_MS + 1_500,
      () => [partnerTimeLeft(now), partnerTimeLeft(now + 2_000)],
      now,
    );
    expect(left).toEqual([1_500, 0]);
    expect(partnerTimeLeft(now)).toBeUndefined();
  });

  it('lets DynamoDB and SQS attempts record answers in the reserve, never in the last moments', () => {
    const left = withInvocationDeadline(
      10_000,
      () => [
        awsAttemptTimeout(5_000, now),
        // Past the outside calls' deadline: still time to record what they answered.
        awsAttemptTimeout(5_000, now + 10_000 - ANSWER_RESERVE_MS),
        awsAttemptTimeout(5_000, now + 10_000 - FINAL_ANSWER_MS - MIN_AWS_ATTEMPT_MS),
        awsAttemptTimeout(5_000, now + 10_000 - FINAL_ANSWER_MS - MIN_AWS_ATTEMPT_MS + 1),
        awsAttemptTimeout(5_000, now + 11_000),
      ],
      now,
    );
    expect(left).toEqual([
      5_000,
      ANSWER_RESERVE_MS - FINAL_ANSWER_MS,
      MIN_AWS_ATTEMPT_MS,
      undefined,
      undefined,
    ]);
    // Outside an invocation (a CLI, a consumer, a test): the configured timeout.
    expect(awsAttemptTimeout(5_000, now)).toBe(5_000);
  });
});
