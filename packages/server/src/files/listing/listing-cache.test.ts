import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FIELDS, F_MODE } from './dir-layout.js';
import { DirSnapshot } from './dir-snapshot.js';
import { ListingCache } from './listing-cache.js';

/** A snapshot of `count` plain files (what the cache compares; no folder behind it). */
function snapshotOf(count: number): DirSnapshot {
  const names = Array.from({ length: count }, (_, i) => `f-${i}.dat`);
  const data = new Float64Array(count * FIELDS);
  for (let i = 0; i < count; i++) data[i * FIELDS + F_MODE] = 0o100644;
  return new DirSnapshot(names, data);
}

const TEXT = [Buffer.from('"items":[{"name":"a"}'), Buffer.from(',{"name":"b"}],"numDirs":0,"numFiles":2')];
const LENGTH = TEXT[0]!.length + TEXT[1]!.length;

describe('cached listing text read more than once', () => {
  // Small snapshots take the ordinary places; 2,000 entries (144 KB) the one big place.
  it.each([
    ['an ordinary listing', 10],
    ['the big listing', 2000],
  ])('%s, kept deflated, is inflated anew for each reader', (_name, entries) => {
    const cache = new ListingCache({ maxBytes: 64 * 1024, bigBytes: 8 << 20 });
    cache.set('k', snapshotOf(entries), {
      pieces: TEXT.map((t) => deflateRawSync(t)),
      packed: true,
      length: LENGTH,
    });
    const hit = cache.get('k', snapshotOf(entries))!;
    expect(hit.length).toBe(LENGTH);
    const first = [...hit.pieces];
    const second = [...hit.pieces];
    expect(Buffer.concat(first).equals(Buffer.concat(TEXT))).toBe(true);
    expect(Buffer.concat(second).equals(Buffer.concat(TEXT))).toBe(true);
    // Made again, not kept from the first reading: only the deflated pieces stay in memory.
    expect(second[0]).not.toBe(first[0]);
  });

  it('a listing kept as it was sent gives its own pieces to every reader', () => {
    const cache = new ListingCache({ maxBytes: 64 * 1024 });
    cache.set('k', snapshotOf(10), { pieces: TEXT, packed: false, length: LENGTH });
    const hit = cache.get('k', snapshotOf(10))!;
    expect([...hit.pieces]).toEqual(TEXT);
    expect([...hit.pieces]).toEqual(TEXT);
  });
});
