import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SearchHit } from '@filebrowser/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveIo } from '../listing/adaptive-io.js';
import type { FolderScan } from '../listing/dir-layout.js';
import { DirReader } from '../listing/dir-snapshot.js';
import type { PreparedNameFilter } from '../listing/name-filter.js';
import { searchTree } from './search.js';
import { deny, testAccess, type TestAccess } from '../../../test/files-helpers.js';

let base: string;
let root: string;
let dev: number;
const readers: DirReader[] = [];
const accesses: TestAccess[] = [];

/** Several of the reader thread's read buffers (1,024 entries each). */
const BIG = 4 * 1024 + 123;
const HIT_EVERY = 7;
/** Names whose UTF-16 order is not their byte order (U+FB01 sorts before U+1F600 in UTF-16). */
const ODD_NAMES = [
  'needle-\u{1F600}.txt',
  'needle-\uFB01.txt',
  'needle-é.txt',
  'Needle-Z.txt',
  'needle-a.txt',
];
/** The chain of folders below /chain: deeper than the walk reads ahead (64 folders). */
const CHAIN = 100;

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Creates `count` empty files in `dir`, one name in `HIT_EVERY` holding "NeeDle"; returns the hits. */
async function fill(dir: string, count: number): Promise<string[]> {
  await fs.mkdir(dir, { recursive: true });
  const hits: string[] = [];
  for (let i = 0; i < count; i += 200) {
    const names = Array.from({ length: Math.min(200, count - i) }, (_, k) =>
      (i + k) % HIT_EVERY === 0 ? `f-${i + k}-NeeDle.txt` : `f-${i + k}.dat`,
    );
    await Promise.all(names.map((n) => fs.writeFile(path.join(dir, n), '')));
    hits.push(...names.filter((n) => n.includes('NeeDle')));
  }
  return hits;
}

/** A real reader, watched: the real paths of the folders it has finished reading. */
function watched(threads: number): { reader: DirReader; read: Set<string> } {
  const inner = new DirReader({ threads, io: new AdaptiveIo() });
  readers.push(inner);
  const read = new Set<string>();
  const reader = Object.assign(Object.create(inner) as DirReader, {
    async scan(
      dir: string,
      d: number | bigint,
      filter: PreparedNameFilter,
      size?: number,
    ): Promise<FolderScan> {
      // Folders are read through their descriptors (`/proc/self/fd/N`): find the name.
      const real = dir.startsWith('/proc/') ? await fs.readlink(dir) : dir;
      const scan = await inner.scan(dir, d, filter, size);
      read.add(real);
      return scan;
    },
  });
  return { reader, read };
}

async function accessWith(rules = [deny('/big/f-14-NeeDle.txt'), deny('/big/sub-2')]) {
  const t = await testAccess(root, { rules });
  accesses.push(t);
  return t.access;
}

let bigHits: string[];

beforeAll(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-search-')));
  root = path.join(base, 'root');
  bigHits = await fill(path.join(root, 'big'), BIG);
  for (const name of ODD_NAMES) await fs.writeFile(path.join(root, 'big', name), '');
  // Sub-folders among the big folder's files: one a hit itself, one denied by the rules.
  for (const sub of ['sub-0', 'sub-1-needle', 'sub-2']) {
    await fs.mkdir(path.join(root, 'big', sub));
    await fs.writeFile(path.join(root, 'big', sub, `in-${sub}-needle.txt`), '');
  }
  await fs.symlink('sub-0', path.join(root, 'big', 'link-needle'));
  await fs.mkdir(path.join(root, 'chain', ...Array<string>(CHAIN).fill('c')), { recursive: true });
  await fs.writeFile(path.join(root, 'chain', 'a-needle.txt'), '');
  dev = Number((await fs.stat(root)).dev);
});

afterAll(async () => {
  await Promise.all(accesses.splice(0).map((t) => t.close()));
  await Promise.all(readers.map((r) => r.close()));
  await fs.rm(base, { recursive: true, force: true });
});

describe('searchTree', () => {
  it('finds every hit of a folder of thousands exactly once, in name (byte) order, on a reader thread as on the main thread', async () => {
    const own = [
      ...bigHits.filter((n) => n !== 'f-14-NeeDle.txt'),
      ...ODD_NAMES,
      'link-needle',
      'sub-1-needle',
    ].sort(byBytes);
    // The folder's own hits in byte order, then its sub-folders' in turn (sub-2 is denied).
    const expected = [...own, 'sub-0/in-sub-0-needle.txt', 'sub-1-needle/in-sub-1-needle-needle.txt'];
    for (const threads of [1, 0]) {
      const { reader } = watched(threads);
      const hits: SearchHit[] = [];
      for await (const hit of searchTree(await accessWith(), '/big', 'needle', { dev, reader }))
        hits.push(hit);
      expect(hits.map((h) => h.path)).toEqual(expected);
      expect(hits.find((h) => h.path === 'link-needle')?.dir).toBe(true);
      expect(hits.find((h) => h.path === 'sub-1-needle')?.dir).toBe(true);
      expect(hits.find((h) => h.path === ODD_NAMES[0])?.dir).toBe(false);
    }
  });

  it('yields the first hit before the walk has read the rest of the tree', async () => {
    for (const threads of [1, 0]) {
      const { reader, read } = watched(threads);
      const walk = searchTree(await accessWith([]), '/chain', 'needle', { dev, reader });
      const first = await walk.next();
      expect(first.value).toEqual({ dir: false, path: 'a-needle.txt' });
      // Nothing pulls the walk past its first hit, so the bottom of the chain is not read yet: a
      // hit added there now is found.
      const bottom = path.join(root, 'chain', ...Array<string>(CHAIN).fill('c'));
      expect(read.has(bottom)).toBe(false);
      await fs.writeFile(path.join(bottom, `late-${threads}-needle.txt`), '');
      const rest: string[] = [];
      for await (const hit of walk) rest.push(hit.path);
      expect(read.has(bottom)).toBe(true);
      expect(rest).toEqual([`${Array<string>(CHAIN).fill('c').join('/')}/late-${threads}-needle.txt`]);
      await fs.rm(path.join(bottom, `late-${threads}-needle.txt`));
    }
  });
});
