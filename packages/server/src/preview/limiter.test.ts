import { describe, expect, it } from 'vitest';
import { Semaphore } from './limiter.js';

describe('Semaphore', () => {
  it('runs at most `size` tasks at once, the others in order, and survives failures', async () => {
    const limiter = new Semaphore(2);
    const releases: (() => void)[] = [];
    const started: number[] = [];
    let active = 0;
    let peak = 0;
    const task = (i: number) =>
      limiter.run(async () => {
        started.push(i);
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((resolve) => releases.push(resolve));
        active--;
        if (i === 1) throw new Error('task 1 failed');
        return i;
      });
    const results = [0, 1, 2, 3, 4].map((i) => task(i).catch((err: Error) => err.message));
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toEqual([0, 1]);
    releases.shift()!();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    while (releases.length > 0) {
      releases.shift()!();
      await settle();
    }
    expect(await Promise.all(results)).toEqual([0, 'task 1 failed', 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
  });
});
