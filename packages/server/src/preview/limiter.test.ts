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

describe('Semaphore with a signal', () => {
  it('drops a waiting task whose signal aborts, and the tasks behind it move up', async () => {
    const limiter = new Semaphore(1);
    let release!: () => void;
    const first = limiter.run(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
    const gone = new AbortController();
    const ran: string[] = [];
    const dropped = limiter.run(async () => void ran.push('dropped'), gone.signal);
    const kept = limiter.run(async () => void ran.push('kept'));
    expect(limiter.queued).toBe(2);
    gone.abort(new Error('the client went away'));
    await expect(dropped).rejects.toThrow('the client went away');
    expect(limiter.queued).toBe(1);
    release();
    expect(await first).toBe('first');
    await kept;
    expect(ran).toEqual(['kept']);
    expect(limiter.running).toBe(0);
  });

  it('refuses a task whose signal aborted before it asked', async () => {
    const limiter = new Semaphore(1);
    await expect(limiter.run(async () => 'ran', AbortSignal.abort(new Error('gone')))).rejects.toThrow(
      'gone',
    );
    expect(limiter.running).toBe(0);
  });

  it('says when the last task of a burst ends, and only then', async () => {
    let idle = 0;
    const limiter = new Semaphore(2, () => idle++);
    const releases: (() => void)[] = [];
    const task = () => limiter.run(() => new Promise<void>((resolve) => releases.push(resolve)));
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const burst = [task(), task(), task().catch(() => undefined), task()];
    await settle();
    // Two running, two waiting: each end hands the slot on, nothing is idle before the last.
    while (releases.length > 0) {
      expect(idle).toBe(0);
      releases.shift()!();
      await settle();
    }
    await Promise.all(burst);
    expect(idle).toBe(1);
    const failing = limiter.run(() => Promise.reject(new Error('no image')));
    await expect(failing).rejects.toThrow('no image');
    expect(idle).toBe(2); // a failed task ends a burst too
  });
});
