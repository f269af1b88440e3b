/** The verdict on one request. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until a request would be allowed again (only when refused). */
  retryAfterSeconds: number;
}

/** One key's allowed requests, oldest first; those before `head` have left the window. */
interface HitLog {
  times: number[];
  head: number;
}

/**
 * At most `limit` requests per key in any rolling `windowMs` (a sliding log, exact rather than
 * fixed-window). Refused requests are not counted. Used by the local gateway; on AWS the API
 * Gateway usage plan enforces the same numbers. Each request costs the same however many are in
 * the window: hits are kept in arrival order and leave it from the front.
 */
export class SlidingWindowLimiter {
  private readonly logs = new Map<string, HitLog>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    const now = this.now();
    let log = this.logs.get(key);
    if (!log) {
      log = { times: [], head: 0 };
      this.logs.set(key, log);
    }
    this.expire(log, now);
    const inWindow = log.times.length - log.head;
    if (inWindow >= this.limit) {
      const oldest = log.times[log.head] ?? now;
      const retryAfterSeconds = Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
      return { allowed: false, limit: this.limit, remaining: 0, retryAfterSeconds };
    }
    log.times.push(now);
    this.prune(now);
    return { allowed: true, limit: this.limit, remaining: this.limit - inWindow - 1, retryAfterSeconds: 0 };
  }

  /** Moves past the hits that left the window; drops them once they are most of the log. */
  private expire(log: HitLog, now: number): void {
    while (log.head < log.times.length && now - (log.times[log.head] ?? now) >= this.windowMs) log.head++;
    if (log.head > 0 && log.head * 2 >= log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
  }

  /** Drops keys with no hit inside the window, so many one-off keys cannot grow memory forever. */
  private prune(now: number): void {
    if (this.logs.size < 10_000) return;
    for (const [key, log] of this.logs) {
      const newest = log.times.at(-1);
      if (newest === undefined || now - newest >= this.windowMs) this.logs.delete(key);
    }
  }
}
