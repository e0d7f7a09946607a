import { describe, expect, it } from 'vitest';
import {
  FIELDS,
  F_CTIME_NS,
  F_CTIME_S,
  F_DEV,
  F_INO_HI,
  F_INO_LO,
  F_MODE,
  F_MTIME_NS,
  F_MTIME_S,
  F_SIZE,
} from './dir-layout.js';
import { TypeCache } from './type-cache.js';

const NOW_MS = 1_700_000_000_000;

/** One snapshot entry of a regular file changed an hour before NOW_MS. */
function entry(over: Partial<Record<number, number>> = {}): Float64Array {
  const data = new Float64Array(FIELDS);
  data[F_MODE] = 0o100644;
  data[F_SIZE] = 300;
  data[F_MTIME_S] = NOW_MS / 1000 - 3600;
  data[F_MTIME_NS] = 123_456_789;
  data[F_CTIME_S] = NOW_MS / 1000 - 3600;
  data[F_CTIME_NS] = 5;
  data[F_INO_HI] = 1;
  data[F_INO_LO] = 42;
  data[F_DEV] = 2049;
  for (const [field, value] of Object.entries(over)) data[Number(field)] = value as number;
  return data;
}

const cache = (capacity = 10) => new TypeCache(capacity, () => NOW_MS, 2000);

/** Entry `over` for file number `n` (its inode). */
const file = (n: number, over: Partial<Record<number, number>> = {}) => entry({ [F_INO_LO]: n, ...over });

describe('TypeCache', () => {
  it('answers for the same version of a file', () => {
    const c = cache();
    c.set(entry(), 0, '', 'blob');
    expect(c.get(entry(), 0, '')).toBe('blob');
    expect(c.get(file(43), 0, '')).toBeUndefined();
    expect(c.size).toBe(1);
  });

  it('reads entries at their index in a snapshot', () => {
    const c = cache();
    const two = new Float64Array(FIELDS * 2);
    two.set(entry(), 0);
    two.set(entry({ [F_SIZE]: 7 }), FIELDS);
    c.set(two, 1, '', 'text');
    expect(c.get(entry({ [F_SIZE]: 7 }), 0, '')).toBe('text');
    expect(c.get(two, 0, '')).toBeUndefined(); // the other entry's size
  });

  it.each([
    ['size', F_SIZE, 301],
    ['mtime seconds', F_MTIME_S, NOW_MS / 1000 - 3599],
    ['mtime nanoseconds', F_MTIME_NS, 123_456_788],
    ['ctime (content rewritten and mtime set back)', F_CTIME_NS, 6],
    ['ctime seconds', F_CTIME_S, NOW_MS / 1000 - 3599],
    ['inode (replaced by a rename)', F_INO_LO, 43],
    ['inode high bits', F_INO_HI, 2],
    ['device', F_DEV, 2050],
  ])('forgets a file whose %s changed', (_what, field, value) => {
    const c = cache();
    c.set(entry(), 0, '', 'blob');
    expect(c.get(entry({ [field]: value }), 0, '')).toBeUndefined();
    if (field !== F_INO_LO && field !== F_INO_HI && field !== F_DEV) {
      // the same file, changed: its entry no longer answers, not even for the old version
      expect(c.size).toBe(0);
      expect(c.get(entry(), 0, '')).toBeUndefined();
    }
  });

  it('does not answer for a name of another MIME type (a rename, a hard link)', () => {
    const c = cache();
    c.set(entry(), 0, '', 'image'); // sniffed: no MIME type from the name
    expect(c.get(entry(), 0, 'application/octet-stream')).toBeUndefined();
    c.set(entry(), 0, 'application/octet-stream', 'blob');
    expect(c.get(entry(), 0, 'application/octet-stream')).toBe('blob');
    expect(c.get(entry(), 0, '')).toBeUndefined();
  });

  it('gives no old type for a file replaced by another of the same size, times and inode number', () => {
    const c = cache();
    c.set(entry(), 0, '', 'image');
    // A new file can reuse a freed inode number, but its ctime is its creation time: later.
    const replacement = entry({ [F_CTIME_S]: NOW_MS / 1000 - 60 });
    expect(c.get(replacement, 0, '')).toBeUndefined();
    c.set(replacement, 0, '', 'text');
    expect(c.get(replacement, 0, '')).toBe('text');
    expect(c.size).toBe(1);
    // One entry per file: asked with the old version, it forgets the new one rather than guess.
    expect(c.get(entry(), 0, '')).toBeUndefined();
    expect(c.get(replacement, 0, '')).toBeUndefined();
  });

  it('does not keep files changed too recently for their times to tell versions apart', () => {
    const c = cache();
    const fresh = entry({ [F_MTIME_S]: NOW_MS / 1000 - 1 });
    c.set(fresh, 0, '', 'text');
    expect(c.get(fresh, 0, '')).toBeUndefined();
    const touched = file(2, { [F_CTIME_S]: NOW_MS / 1000 - 1 });
    c.set(touched, 0, '', 'text');
    expect(c.get(touched, 0, '')).toBeUndefined();
    expect(c.settled(entry(), 0)).toBe(true);
    expect(c.settled(fresh, 0)).toBe(false);
  });

  it('forgets an entry set again for a version it may not keep', () => {
    const c = cache();
    c.set(entry(), 0, '', 'text');
    c.set(entry({ [F_MTIME_S]: NOW_MS / 1000 - 1 }), 0, '', 'blob');
    expect(c.size).toBe(0);
    expect(c.get(entry(), 0, '')).toBeUndefined();
  });

  it('does not keep versions its arrays cannot hold exactly', () => {
    const c = cache();
    const huge = file(1, { [F_SIZE]: 5 * 2 ** 30 });
    c.set(huge, 0, '', 'blob');
    expect(c.get(huge, 0, '')).toBeUndefined();
    const future = file(2, { [F_MTIME_S]: 2 ** 31 + 5 });
    c.set(future, 0, '', 'blob');
    expect(c.get(future, 0, '')).toBeUndefined();
    const before1970 = file(3, { [F_MTIME_S]: -10, [F_MTIME_NS]: -5 });
    c.set(before1970, 0, '', 'blob');
    expect(c.get(before1970, 0, '')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('evicts entries not asked for since the clock hand last passed, keeping those asked for', () => {
    const c = cache(4);
    for (const n of [1, 2, 3, 4]) c.set(file(n), 0, '', 'text');
    c.set(file(5), 0, '', 'blob'); // all were recent: one turn of the hand clears them, then 1 goes
    expect(c.get(file(1), 0, '')).toBeUndefined();
    expect(c.get(file(3), 0, '')).toBe('text'); // asked for: survives the next turn
    c.set(file(6), 0, '', 'blob');
    c.set(file(7), 0, '', 'blob');
    expect(c.size).toBe(4);
    expect(c.get(file(2), 0, '')).toBeUndefined();
    expect(c.get(file(4), 0, '')).toBeUndefined();
    for (const n of [3, 5, 6, 7]) expect(c.get(file(n), 0, '')).toBeDefined();
  });

  it('keeps every header-typed file of a folder of 200,000 in a few MB, and finds them all', () => {
    const c = new TypeCache(262_144, () => NOW_MS, 2000);
    const n = 200_000;
    const data = new Float64Array(n * FIELDS);
    for (let i = 0; i < n; i++) {
      data.set(entry({ [F_INO_LO]: 1000 + i * 7, [F_INO_HI]: i % 3, [F_SIZE]: i }), i * FIELDS);
    }
    for (let i = 0; i < n; i++)
      c.set(data, i, i % 2 ? '' : 'application/octet-stream', i % 5 ? 'blob' : 'text');
    expect(c.size).toBe(n);
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      if (c.get(data, i, i % 2 ? '' : 'application/octet-stream') !== (i % 5 ? 'blob' : 'text')) wrong++;
    }
    expect(wrong).toBe(0);
    expect(c.bytes).toBeLessThan(12 * 1024 * 1024);
  });

  it('stays consistent through many evictions (every answer is the last type set for that version)', () => {
    const c = cache(64);
    const truth = new Map<number, string>();
    let seed = 7;
    const rand = (m: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % m;
    };
    const types = ['text', 'blob', 'image', 'pdf'] as const;
    for (let step = 0; step < 5000; step++) {
      const ino = rand(200);
      const version = file(ino, { [F_SIZE]: rand(3) });
      if (rand(2) === 0) {
        const type = types[rand(4)]!;
        c.set(version, 0, '', type);
        truth.set(ino * 10 + version[F_SIZE]!, type);
        for (let s = 0; s < 3; s++) if (s !== version[F_SIZE]) truth.delete(ino * 10 + s);
      } else {
        const got = c.get(version, 0, '');
        if (got !== undefined && got !== truth.get(ino * 10 + version[F_SIZE]!)) {
          expect.fail(`step ${step}: ${got} for inode ${ino}`);
        }
      }
      if (c.size > 64) expect.fail(`step ${step}: ${c.size} entries`);
    }
  });

  it('starts empty again after clear', () => {
    const c = cache();
    c.set(entry(), 0, '', 'text');
    c.clear();
    expect(c.size).toBe(0);
    expect(c.get(entry(), 0, '')).toBeUndefined();
    c.set(entry(), 0, '', 'blob');
    expect(c.get(entry(), 0, '')).toBe('blob');
  });
});
