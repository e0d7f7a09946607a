import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { AdaptiveIo, isLocalFileSystem, mapLimit, type BatchReport } from './adaptive-io.js';

/**
 * A fake clock that the "synchronous calls" advance, so slowness is decided by the test, not by
 * the machine running it.
 */
function harness(opts: { local?: boolean } = {}) {
  let now = 0;
  let yields = 0;
  const io = new AdaptiveIo({
    sliceMs: 4,
    slowCallMs: 0.05,
    strikes: 3,
    stallMs: 100,
    cooldownMs: 30_000,
    concurrency: 4,
    now: () => now,
    isLocal: async () => opts.local ?? true,
    yieldToLoop: async () => {
      yields++;
    },
  });
  const calls = { sync: 0, async: 0 };
  /** Runs a batch where each synchronous call costs `costMs(i)` of the fake clock. */
  const run = async (n: number, costMs: (i: number) => number) => {
    let report: BatchReport | undefined;
    const items = Array.from({ length: n }, (_, i) => i);
    const out = await io.map(
      1,
      '/any',
      items,
      (i) => {
        calls.sync++;
        now += costMs(i);
        return i * 2;
      },
      async (i) => {
        calls.async++;
        return i * 2;
      },
      (r) => (report = r),
    );
    return { out, report: report! };
  };
  return {
    io,
    run,
    calls,
    advance: (ms: number) => (now += ms),
    get yields() {
      return yields;
    },
  };
}

describe('AdaptiveIo', () => {
  it('calls a fast local device synchronously, in slices with a turn of the event loop between', async () => {
    const h = harness();
    const { out, report } = await h.run(1000, () => 0.01);
    expect(out).toEqual(Array.from({ length: 1000 }, (_, i) => i * 2));
    expect(report).toEqual({ sync: 1000, async: 0, markedSlow: false });
    // 1000 calls of 10 µs are 10 ms: two full slices of 4 ms, then the rest.
    expect(h.yields).toBe(2);
  });

  it('never calls a device that is not known to be local synchronously', async () => {
    const h = harness({ local: false });
    const { out, report } = await h.run(50, () => 0);
    expect(out[49]).toBe(98);
    expect(report).toEqual({ sync: 0, async: 50, markedSlow: false });
    expect(h.calls.sync).toBe(0);
  });

  it('moves to the thread pool after slow slices in a row, and stays there for the cool-down', async () => {
    const h = harness();
    // 1 ms per call: every slice of 4 ms holds 8 calls (the clock is looked at every 8 calls).
    const first = await h.run(100, () => 1);
    expect(first.report).toEqual({ sync: 24, async: 76, markedSlow: true });
    expect(first.out).toEqual(Array.from({ length: 100 }, (_, i) => i * 2));

    const during = await h.run(10, () => 0);
    expect(during.report).toEqual({ sync: 0, async: 10, markedSlow: false });

    h.advance(30_000);
    const after = await h.run(10, () => 0);
    expect(after.report).toEqual({ sync: 10, async: 0, markedSlow: false });
  });

  it('forgives one slow slice among fast ones (a collection, a lost core)', async () => {
    const h = harness();
    // The 8 first calls take 5 ms together, every later call 10 µs.
    const { report } = await h.run(2000, (i) => (i < 8 ? 5 / 8 : 0.01));
    expect(report).toEqual({ sync: 2000, async: 0, markedSlow: false });
  });

  it('gives up at once on a slice that stalls', async () => {
    const h = harness();
    const { report } = await h.run(20, (i) => (i === 0 ? 150 : 0));
    expect(report).toEqual({ sync: 8, async: 12, markedSlow: true });
  });

  it('judges work done on other threads like its own slices', async () => {
    const h = harness();
    h.io.observe(1, '/any', 50, 10_000); // 5 µs per call: fast
    expect(await h.io.isFast(1, '/any')).toBe(true);
    h.io.observe(1, '/any', 200, 100); // 2 ms per call: slow, and long enough to count at once
    expect(await h.io.isFast(1, '/any')).toBe(false);
    expect(await h.io.isFast(2, '/any')).toBe(true); // another device is not concerned
  });

  it('takes a long stretch on a reader thread for one strike, not a stall', async () => {
    const h = harness();
    // a folder of one entry read in 124 ms: the thread lost its core, the disk is not to blame
    h.io.observe(1, '/any', 124, 1, { stall: false });
    h.io.observe(1, '/any', 10, 500, { stall: false }); // 20 µs per call: fast, strikes reset
    h.io.observe(1, '/any', 200, 1, { stall: false });
    h.io.observe(1, '/any', 200, 1, { stall: false });
    expect(await h.io.isFast(1, '/any')).toBe(true);
    h.io.observe(1, '/any', 200, 1, { stall: false }); // the third in a row
    expect(await h.io.isFast(1, '/any')).toBe(false);
  });

  it('keeps the order of results through the thread pool with bounded concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, n));
      inFlight--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });

  it('asks statfs whether a folder is on a local file system', async () => {
    expect(await isLocalFileSystem('/nonexistent/folder/for/sure')).toBe(false);
    // The temp folder is local on any Linux test machine (ext4, tmpfs, overlay, …).
    if (process.platform === 'linux') expect(await isLocalFileSystem(os.tmpdir())).toBe(true);
  });
});
