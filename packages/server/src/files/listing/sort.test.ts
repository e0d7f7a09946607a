import { describe, expect, it } from 'vitest';
import { sortIndexes, sortIndexesInTurns, type SortKeys } from './sort.js';

/** Entries with many equal keys (names, sizes, times repeat), so that stability shows. */
function entries(n: number, seed: number) {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: n }, (_, i) => ({
    name: `${['Report', 'photo', 'a', 'Zeta', 'ä'][next() % 5]}-${next() % 50}${i % 7 === 0 ? '.txt' : ''}`,
    size: next() % 10,
    isDir: next() % 9 === 0,
    mtimeSec: 1_700_000_000 + (next() % 5),
    mtimeNsec: next() % 3,
  }));
}

describe('sortIndexesInTurns', () => {
  it('gives exactly the order of sortIndexes, for every sorting, across run boundaries', async () => {
    for (const n of [0, 1, 4095, 4096, 4097, 9000, 20_000]) {
      const list = entries(n, n + 1);
      const keys: SortKeys = {
        name: (i) => list[i]!.name,
        size: (i) => list[i]!.size,
        isDir: (i) => list[i]!.isDir,
        mtimeSec: (i) => list[i]!.mtimeSec,
        mtimeNsec: (i) => list[i]!.mtimeNsec,
      };
      for (const by of ['name', 'size', 'modified', 'other']) {
        for (const asc of [false, true]) {
          const indexes = () => list.map((_, i) => i);
          let turns = 0;
          const inTurns = await sortIndexesInTurns(indexes(), keys, { by, asc }, async () => void turns++);
          expect(inTurns, `${n} ${by} ${asc}`).toEqual(sortIndexes(indexes(), keys, { by, asc }));
          // One turn per run sorted, and more for the merges: none for what fits one run.
          if (n <= 4096) expect(turns).toBe(0);
          else expect(turns).toBeGreaterThan(Math.floor(n / 4096));
        }
      }
    }
  });
});
