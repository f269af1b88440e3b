/** The verdict on one request. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until a request would be allowed again (only when refused). */
  retryAfterSeconds: number;
}

/**
 * At most `limit` requests per key in any rolling `windowMs` (a sliding log, exact rather than
 * fixed-window). Refused requests are not counted. Used by the local gateway; on AWS the API
 * Gateway usage plan enforces the same numbers.
 */
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    const now = this.now();
    const recent = (this.hits.get(key) ?? []).filter((at) => now - at < this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      const oldest = recent[0] ?? now;
      const retryAfterSeconds = Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
      return { allowed: false, limit: this.limit, remaining: 0, retryAfterSeconds };
    }
    recent.push(now);
    this.hits.set(key, recent);
    this.prune(now);
    return { allowed: true, limit: this.limit, remaining: this.limit - recent.length, retryAfterSeconds: 0 };
  }

  /** Drops keys with no hit inside the window, so many one-off keys cannot grow memory forever. */
  private prune(now: number): void {
    if (this.hits.size < 10_000) return;
    for (const [key, times] of this.hits) {
      if (times.every((at) => now - at >= this.windowMs)) this.hits.delete(key);
    }
  }
}
