import { describe, expect, it } from 'vitest';
import { AttemptLimiter } from '../src/auth/rate-limit.js';

/** Counts the sweeps, to see how often the whole map is walked. */
class CountingLimiter extends AttemptLimiter {
  sweeps = 0;
  protected override sweep(now: number): void {
    this.sweeps++;
    super.sweep(now);
  }
}

describe('AttemptLimiter', () => {
  it('walks its windows rarely however many are live, and forgets the ended ones', () => {
    const limiter = new CountingLimiter(60_000);
    const start = 1_000_000;
    for (let i = 0; i < 25_000; i++) limiter.take(`a${i}`, start);
    // Live windows cannot be swept away: the walks grow rarer as their number grows.
    expect(limiter.sweeps).toBeLessThanOrEqual(2);
    expect(limiter.count('a0', start)).toBe(1);

    const later = start + 60_000;
    for (let i = 0; i < 25_000; i++) limiter.take(`b${i}`, later);
    expect(limiter.count('a0', later)).toBe(0);
    expect(limiter.count('b0', later)).toBe(1);
    expect(limiter.sweeps).toBeLessThanOrEqual(4);
  });

  it('counts, gives back and clears the attempts of a key within its window', () => {
    const limiter = new AttemptLimiter(1_000);
    for (let i = 0; i < 3; i++) limiter.take('k', 0);
    expect(limiter.retryAfter('k', 3, 0)).toBe(1);
    expect(limiter.retryAfter('k', 4, 0)).toBe(0);
    limiter.give('k', 2, 0);
    expect(limiter.count('k', 0)).toBe(1);
    expect(limiter.clear('k', 0)).toBe(1);
    expect(limiter.count('k', 0)).toBe(0);
    limiter.take('k', 0);
    expect(limiter.count('k', 1_000)).toBe(0);
  });
});
