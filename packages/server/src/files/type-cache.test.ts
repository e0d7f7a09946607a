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

describe('TypeCache', () => {
  it('answers for the same version of a file', () => {
    const c = cache();
    c.set('/d/a', entry(), 0, 'blob');
    expect(c.get('/d/a', entry(), 0)).toBe('blob');
    expect(c.get('/d/b', entry(), 0)).toBeUndefined();
  });

  it('reads entries at their index in a snapshot', () => {
    const c = cache();
    const two = new Float64Array(FIELDS * 2);
    two.set(entry(), 0);
    two.set(entry({ [F_SIZE]: 7 }), FIELDS);
    c.set('/d/b', two, 1, 'text');
    expect(c.get('/d/b', entry({ [F_SIZE]: 7 }), 0)).toBe('text');
    expect(c.get('/d/b', two, 0)).toBeUndefined(); // the other entry's size
  });

  it.each([
    ['size', F_SIZE, 301],
    ['mtime seconds', F_MTIME_S, NOW_MS / 1000 - 3599],
    ['mtime nanoseconds', F_MTIME_NS, 123_456_788],
    ['ctime (content rewritten and mtime set back)', F_CTIME_NS, 6],
    ['inode (replaced by a rename)', F_INO_LO, 43],
    ['inode high bits', F_INO_HI, 2],
    ['device', F_DEV, 2050],
  ])('forgets a file whose %s changed', (_what, field, value) => {
    const c = cache();
    c.set('/d/a', entry(), 0, 'blob');
    expect(c.get('/d/a', entry({ [field]: value }), 0)).toBeUndefined();
    expect(c.size).toBe(0);
    // …and does not answer for the old version either once forgotten.
    expect(c.get('/d/a', entry(), 0)).toBeUndefined();
  });

  it('does not keep files changed too recently for their times to tell versions apart', () => {
    const c = cache();
    const fresh = entry({ [F_MTIME_S]: NOW_MS / 1000 - 1 });
    c.set('/d/a', fresh, 0, 'text');
    expect(c.get('/d/a', fresh, 0)).toBeUndefined();
    const touched = entry({ [F_CTIME_S]: NOW_MS / 1000 - 1 });
    c.set('/d/b', touched, 0, 'text');
    expect(c.get('/d/b', touched, 0)).toBeUndefined();
    expect(c.settled(entry(), 0)).toBe(true);
    expect(c.settled(fresh, 0)).toBe(false);
  });

  it('drops the least recently used entries beyond its capacity', () => {
    const c = cache(2);
    c.set('/a', entry(), 0, 'text');
    c.set('/b', entry(), 0, 'text');
    expect(c.get('/a', entry(), 0)).toBe('text'); // /a is now the most recent
    c.set('/c', entry(), 0, 'blob');
    expect(c.size).toBe(2);
    expect(c.get('/b', entry(), 0)).toBeUndefined();
    expect(c.get('/a', entry(), 0)).toBe('text');
    expect(c.get('/c', entry(), 0)).toBe('blob');
  });
});
