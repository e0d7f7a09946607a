import { describe, expect, it } from 'vitest';
import { unauthorized } from '../errors.js';
import type { StoredUser } from '../store/users.js';
import type { Confinement } from '../files/access/access.js';
import { whileAllowed, type Caller } from './caller.js';

/**
 * A log of what happened, in order: `found n` when the source made item n, `check k begins` /
 * `check k passes` around the caller's k-th check, `out n` when item n was handed on.
 */
type Log = string[];

/** A source of `count` items that logs each one it makes and whether it was let go. */
function source(count: number, log: Log, signal?: AbortSignal) {
  const state = { returned: false };
  async function* items() {
    try {
      for (let n = 1; n <= count; n++) {
        if (signal?.aborted) return;
        // A turn of the event loop per item, as a walk reading folders takes.
        await new Promise((resolve) => setImmediate(resolve));
        log.push(`found ${n}`);
        yield n;
      }
    } finally {
      state.returned = true;
    }
  }
  return { items: items(), state };
}

/** A caller whose checks take a few turns each (a round trip) and refuse from check `refuseAt` on. */
function caller(log: Log, refuseAt = Infinity): Caller & { checks: () => number } {
  let k = 0;
  return {
    userId: 1,
    confinedTo: undefined,
    checks: () => k,
    async now() {
      const mine = ++k;
      log.push(`check ${mine} begins`);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      if (mine >= refuseAt) throw unauthorized('the session it was started in has ended');
      log.push(`check ${mine} passes`);
      return {} as StoredUser & Confinement;
    },
  };
}

/** Every item handed on was found before a check began that passed before it went out. */
function expectEachOutAfterItsCheck(log: Log) {
  for (const [i, line] of log.entries()) {
    const out = /^out (\d+)$/.exec(line);
    if (!out) continue;
    const foundAt = log.indexOf(`found ${out[1]}`);
    const begun = log.slice(foundAt, i).find((l) => / begins$/.test(l));
    expect(begun, `item ${out[1]}`).toBeDefined();
    expect(log.slice(foundAt, i)).toContain(begun!.replace('begins', 'passes'));
  }
}

describe('whileAllowed', () => {
  it('asks before each item, and finds nothing meanwhile, by default', async () => {
    const log: Log = [];
    const { items } = source(4, log);
    for await (const n of whileAllowed(items, caller(log))) log.push(`out ${n}`);
    expect(log.filter((l) => l.startsWith('out'))).toEqual(['out 1', 'out 2', 'out 3', 'out 4']);
    expectEachOutAfterItsCheck(log);
    expect(log.indexOf('found 2')).toBeGreaterThan(log.indexOf('out 1'));
  });

  it('ahead: finds on while it asks, one check letting out what was found before it began', async () => {
    const log: Log = [];
    const { items, state } = source(40, log);
    const who = caller(log);
    const out: number[] = [];
    for await (const n of whileAllowed(items, who, { ahead: 8 })) {
      out.push(n);
      log.push(`out ${n}`);
    }
    expect(out).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expectEachOutAfterItsCheck(log);
    expect(who.checks()).toBeLessThan(40);
    expect(log.indexOf('found 2')).toBeLessThan(log.indexOf('check 1 passes'));
    expect(state.returned).toBe(true);
  });

  it('ahead: holds no more than the bound found and not yet let out', async () => {
    const log: Log = [];
    const { items } = source(50, log);
    let maxWaiting = 0;
    for await (const n of whileAllowed(items, caller(log), { ahead: 5 })) {
      const found = log.filter((l) => l.startsWith('found')).length;
      maxWaiting = Math.max(maxWaiting, found - n);
      log.push(`out ${n}`);
    }
    // The bound, plus the one item being found while the bound was reached.
    expect(maxWaiting).toBeLessThanOrEqual(6);
  });

  it('ahead: a refusal lets nothing more out, stops the source and is the stream’s error', async () => {
    const log: Log = [];
    const stop = new AbortController();
    const { items, state } = source(1000, log, stop.signal);
    const out: number[] = [];
    const read = async () => {
      for await (const n of whileAllowed(items, caller(log, 3), { ahead: 16, stop })) {
        out.push(n);
        log.push(`out ${n}`);
      }
    };
    await expect(read()).rejects.toThrow('the session it was started in has ended');
    const refused = log.indexOf('check 3 begins');
    expect(log.slice(refused).some((l) => l.startsWith('out'))).toBe(false);
    expectEachOutAfterItsCheck(log);
    expect(stop.signal.aborted).toBe(true);
    expect(state.returned).toBe(true);
    expect(log.filter((l) => l.startsWith('found')).length).toBeLessThan(1000);
  });

  it('ahead: what was found before the source failed goes out, then its failure', async () => {
    const log: Log = [];
    async function* failing() {
      yield 1;
      yield 2;
      throw new Error('the disk went away');
    }
    const out: number[] = [];
    const read = async () => {
      for await (const n of whileAllowed(failing(), caller(log), { ahead: 16 })) out.push(n);
    };
    await expect(read()).rejects.toThrow('the disk went away');
    expect(out).toEqual([1, 2]);
  });

  it('ahead: a reader that stops early lets the source go', async () => {
    const log: Log = [];
    const stop = new AbortController();
    const { items, state } = source(1000, log, stop.signal);
    for await (const n of whileAllowed(items, caller(log), { ahead: 4, stop })) if (n === 3) break;
    expect(stop.signal.aborted).toBe(true);
    expect(state.returned).toBe(true);
  });
});
