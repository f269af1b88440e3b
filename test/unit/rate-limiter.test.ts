import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from '#infra/local/rate-limiter.ts';
import { RATE_LIMIT } from '#shared/definitions/routes.ts';

const clock = (start = 1_000_000) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};

describe('the sliding-window rate limiter', () => {
  it('allows 100 requests in a minute and refuses the 101st with Retry-After', () => {
    const time = clock();
    const limiter = new SlidingWindowLimiter(RATE_LIMIT.requests, RATE_LIMIT.windowSeconds * 1000, time.now);
    for (let i = 1; i <= 100; i++) {
      const decision = limiter.take('key:a');
      expect(decision).toMatchObject({ allowed: true, limit: 100, remaining: 100 - i });
      time.advance(100);
    }
    const refused = limiter.take('key:a');
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // The first request was at t0; 100 x 100 ms later it leaves the window 50 s from now.
    expect(refused.retryAfterSeconds).toBe(50);
  });

  it('counts a rolling window, not a fixed minute', () => {
    const time = clock();
    const limiter = new SlidingWindowLimiter(3, 60_000, time.now);
    limiter.take('k');
    time.advance(59_000);
    limiter.take('k');
    limiter.take('k');
    expect(limiter.take('k').allowed).toBe(false);
    time.advance(1_000);
    expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k').allowed).toBe(false);
  });

  it('keeps keys apart and does not count refused requests', () => {
    const time = clock();
    const limiter = new SlidingWindowLimiter(1, 60_000, time.now);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
    time.advance(60_000);
    expect(limiter.take('a').allowed).toBe(true);
  });

  it('keeps exact counts when thousands of hits leave the window at once', () => {
    const time = clock();
    const limiter = new SlidingWindowLimiter(2000, 1000, time.now);
    for (let i = 1; i <= 2000; i++) expect(limiter.take('k').remaining).toBe(2000 - i);
    expect(limiter.take('k')).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    time.advance(500);
    expect(limiter.take('k').allowed).toBe(false);
    time.advance(500);
    // All 2000 left together: the next 2000 are allowed, counted down from the top again.
    for (let i = 1; i <= 2000; i++) expect(limiter.take('k').remaining).toBe(2000 - i);
    expect(limiter.take('k').allowed).toBe(false);
  });

  it('lets hits leave one by one as the window slides over them', () => {
    const time = clock();
    const limiter = new SlidingWindowLimiter(3, 1000, time.now);
    for (const at of [0, 100, 200]) {
      time.advance(at === 0 ? 0 : 100);
      expect(limiter.take('k').allowed).toBe(true);
    }
    time.advance(800); // t = 1000: the hit at 0 has left, those at 100 and 200 have not
    expect(limiter.take('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take('k')).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    time.advance(100); // t = 1100: the hit at 100 leaves
    expect(limiter.take('k')).toMatchObject({ allowed: true, remaining: 0 });
  });
});
