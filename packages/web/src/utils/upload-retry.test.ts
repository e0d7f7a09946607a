import { describe, expect, it } from 'vitest';
import { retryDelays } from './upload-retry';

describe('retryDelays', () => {
  it('starts at 0, then 1 s doubling up to a 20 s cap, one entry per retry', () => {
    expect(retryDelays(1)).toEqual([0]);
    expect(retryDelays(5)).toEqual([0, 1000, 2000, 4000, 8000]);
    expect(retryDelays(8)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 20000, 20000]);
  });

  it('allows no retry for a count of zero or nonsense', () => {
    expect(retryDelays(0)).toEqual([]);
    expect(retryDelays(-3)).toEqual([]);
    expect(retryDelays(Number.NaN)).toEqual([]);
  });

  it('never exceeds the cap however many retries are allowed', () => {
    const delays = retryDelays(100);
    expect(delays).toHaveLength(100);
    expect(Math.max(...delays)).toBe(20000);
  });
});
