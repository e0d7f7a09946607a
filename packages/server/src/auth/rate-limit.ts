/**
 * A fixed-window attempt counter per key (client address, username, share). In memory: limits
 * reset on restart, which is acceptable for brute-force throttling on a single process.
 */
export class AttemptLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Seconds until the key may try again, or 0 when it is under its limit. */
  retryAfter(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) return 0;
    return w.count >= this.limit ? Math.ceil((w.resetAt - now) / 1000) : 0;
  }

  /** Records a failed attempt. */
  fail(key: string, now = Date.now()): void {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    if (this.windows.size > 10_000) this.sweep(now);
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}
