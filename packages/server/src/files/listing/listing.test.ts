import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import type { FileItem, Rule } from '@filebrowser/contract';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileAccess } from '../access/access.js';
import { AdaptiveIo } from './adaptive-io.js';
import {
  FIELDS,
  F_MODE,
  F_SIZE,
  KIND_DIR,
  KIND_LINK,
  KIND_MATCH,
  SPARE_MAX_BYTES,
  type FolderScan,
} from './dir-layout.js';
import { DirReader, DirSnapshot } from './dir-snapshot.js';
import { Pinned } from '../access/anchor.js';
import { listDirectory, type ListingIo } from './folder-listing.js';
import { listDirectoryJson, type ListingJson } from './listing-json.js';
import { ListingCache } from './listing-cache.js';
import { prepareNameFilter, type PreparedNameFilter } from './name-filter.js';
import { parseQuery, searchTree } from '../search/search.js';
import { naturalCompare } from './sort.js';
import { TypeCache } from './type-cache.js';
import { testAccess, type TestAccess } from '../../../test/files-helpers.js';

const SORTING = { by: 'name', asc: false };

/** The one buffer of a listing made whole (not streamed). */
function whole(json: ListingJson): Buffer {
  if (!('length' in json) || !Array.isArray(json.pieces) || json.pieces.length !== 1) {
    throw new Error('the listing was streamed');
  }
  const [piece] = json.pieces as Buffer[];
  expect(piece!.length).toBe(json.length);
  return piece!;
}

/** A streamed listing's pieces. */
async function streamed(json: ListingJson): Promise<Buffer[]> {
  if ('length' in json) throw new Error('the listing was not streamed');
  const pieces: Buffer[] = [];
  for await (const piece of json.pieces) pieces.push(piece);
  return pieces;
}

/** Counts the types it answers from memory. */
class CountingTypes extends TypeCache {
  hits = 0;
  override get(data: Float64Array, index: number, mime: string) {
    const type = super.get(data, index, mime);
    if (type !== undefined) this.hits++;
    return type;
  }
}

let base: string;
let root: string;
const readers: DirReader[] = [];

/** A reader taking the JavaScript ways (threads, or the main thread with 0), or with `native` the addon's. */
function reader(threads: number, idleMs?: number, native = false): DirReader {
  const r = new DirReader({ threads, io: new AdaptiveIo(), idleMs, native });
  readers.push(r);
  return r;
}

/** Listing dependencies of its own, with files counting as settled at once (a clock far ahead). */
function deps(threads = 1, native = true): ListingIo & { types: CountingTypes; rendered: ListingCache } {
  const io = new AdaptiveIo();
  const r = new DirReader({ threads, io, native });
  readers.push(r);
  return {
    io,
    reader: r,
    types: new CountingTypes(100, () => Date.now() + 3_600_000),
    rendered: new ListingCache(),
  };
}

const accesses: TestAccess[] = [];

async function testAccessOf(rules: Rule[] = []): Promise<TestAccess> {
  const t = await testAccess(root, { rules });
  accesses.push(t);
  return t;
}

async function access(rules: Rule[] = []): Promise<FileAccess> {
  return (await testAccessOf(rules)).access;
}

/** A listing function run on the pinned folder at `virtual`. */
async function inFolder<T>(
  virtual: string,
  fn: (folder: Pinned) => Promise<T>,
  rules: Rule[] = [],
): Promise<T> {
  return (await testAccessOf(rules)).withFolder(virtual, fn);
}

const pins: Pinned[] = [];

/** The folder at `dir` pinned, as listings get it (closed after the test). */
async function pin(dir: string): Promise<Pinned> {
  const p = await Pinned.folder(dir);
  pins.push(p);
  return p;
}

/** The snapshot as a map from name to its numbers, for comparisons that ignore the order. */
function byName(s: DirSnapshot): Map<string, number[]> {
  return new Map(s.names.map((n, i) => [n, [...s.data.subarray(i * FIELDS, (i + 1) * FIELDS)]]));
}

beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-listing-')));
  root = path.join(base, 'root');
  await fs.mkdir(path.join(root, 'docs', 'sub'), { recursive: true });
  await fs.writeFile(path.join(root, 'docs', 'a.txt'), 'hello');
  await fs.writeFile(path.join(root, 'docs', 'noext'), 'plain words\n');
  await fs.symlink('a.txt', path.join(root, 'docs', 'link'));
  execFileSync('mkfifo', [path.join(root, 'docs', 'pipe')]);
});

afterEach(async () => {
  await Promise.all(accesses.splice(0).map((t) => t.close()));
  await Promise.all(pins.splice(0).map((p) => p.close()));
  await fs.rm(base, { recursive: true, force: true });
});

afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
});

describe('DirReader', () => {
  it('reads the same entries and metadata on a reader thread as on the main thread', async () => {
    const dir = path.join(root, 'docs');
    await fs.writeFile(path.join(dir, 'été 日本.txt'), ''); // names cross threads as UTF-8
    const { dev } = await fs.stat(dir);
    const threaded = await reader(1).read(await pin(dir), dev);
    const here = await reader(0).read(await pin(dir), dev);
    expect(threaded.origin).toBeDefined(); // it really came from a thread
    expect(here.origin).toBeUndefined();
    expect(byName(threaded)).toEqual(byName(here));
    expect(threaded.sameAs(here)).toBe(true);
    expect([...byName(here).keys()].sort()).toEqual([
      'a.txt',
      'link',
      'noext',
      'pipe',
      'sub',
      'été 日本.txt',
    ]);
    const a = byName(here).get('a.txt')!;
    expect(a[F_MODE]).toBe(0o100000 | ((await fs.lstat(path.join(dir, 'a.txt'))).mode & 0o7777));
    expect(a[F_SIZE]).toBe(5);
    expect(byName(here).get('link')![F_MODE]! & 0o170000).toBe(0o120000);
  });

  it('ends a thread that has been idle and starts a new one for the next folder', async () => {
    const dir = path.join(root, 'docs');
    const { dev } = await fs.stat(dir);
    const r = reader(1, 50);
    const first = await r.read(await pin(dir), dev);
    expect(r.threadCount).toBe(1);
    await new Promise((done) => setTimeout(done, 300));
    expect(r.threadCount).toBe(0);
    first.release(); // a buffer of an ended thread is simply dropped
    const again = await r.read(await pin(dir), dev);
    expect(again.origin).toBeDefined();
    expect(byName(again).get('a.txt')![F_SIZE]).toBe(5);
  });

  it('scans a folder for a search the same on a reader thread as on the main thread', async () => {
    const dir = path.join(root, 'docs');
    await fs.writeFile(path.join(dir, 'Été.TXT'), '');
    const { dev } = await fs.stat(dir);
    const filter = prepareNameFilter(parseQuery('été'));
    const sorted = (s: FolderScan) => s.names.map((n, i) => [n, s.kinds[i]]).sort();
    const expected = [
      ['link', KIND_LINK], // links and folders come whatever their names: the walk needs them
      ['sub', KIND_DIR],
      ['Été.TXT', KIND_MATCH],
    ];
    expect(sorted(await reader(1).scan(dir, dev, filter))).toEqual(expected);
    expect(sorted(await reader(0).scan(dir, dev, filter))).toEqual(expected);
    // The size a search passes only picks how the thread reads (in one go, or entry by entry).
    for (const size of [0, 2 ** 30]) {
      expect(sorted(await reader(1).scan(dir, dev, filter, size))).toEqual(expected);
    }
    const typed = prepareNameFilter(parseQuery('type:txt'));
    expect(sorted(await reader(1).scan(dir, dev, typed)).map(([n]) => n)).toEqual([
      'a.txt', // type: is case-sensitive, so Été.TXT is not one
      'link',
      'sub',
    ]);
    await expect(reader(1).scan(path.join(dir, 'missing'), dev, filter)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('searches a tree with the same hits, in the same order, with and without reader threads', async () => {
    for (let i = 0; i < 30; i++) {
      const dir = path.join(root, 'tree', `d${i % 5}`, `e${i}`);
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, `file-${i}.txt`), '');
      await fs.writeFile(path.join(dir, `Needle-${i}.md`), '');
    }
    // A chain of narrow folders, read ahead of the walk as soon as each parent is read.
    const deep = path.join(root, 'tree', ...Array.from({ length: 40 }, (_, i) => `n${i}`));
    await fs.mkdir(deep, { recursive: true });
    await fs.writeFile(path.join(deep, 'deep-needle.md'), '');
    await fs.mkdir(path.join(root, 'tree', 'needle-folder'));
    await fs.writeFile(path.join(root, 'tree', 'd1', 'secret-needle.md'), '');
    await fs.symlink('../d2', path.join(root, 'tree', 'd1', 'needle-link'));
    const { dev } = await fs.stat(root);
    const rules: Rule[] = [{ regex: false, allow: false, path: '/tree/d1/secret-needle.md', regexp: null }];
    const run = async (threads: number, query: string) => {
      const out = [];
      for await (const hit of searchTree(await access(rules), '/', query, {
        dev,
        reader: reader(threads),
      }))
        out.push(hit);
      return out;
    };
    for (const query of ['needle', 'type:md', 'case:sensitive Needle']) {
      const threaded = await run(1, query);
      expect(threaded).toEqual(await run(0, query));
      expect(threaded.length).toBeGreaterThan(25);
    }
    const hits = await run(1, 'needle');
    expect(hits).toContainEqual({ dir: true, path: 'tree/needle-folder' });
    expect(hits).toContainEqual({ dir: true, path: 'tree/d1/needle-link' });
    expect(hits.map((h) => h.path)).not.toContain('tree/d1/secret-needle.md');
    expect(hits.filter((h) => h.path.endsWith('/deep-needle.md'))).toHaveLength(1);
    expect(hits.map((h) => h.path).indexOf('tree/d0/e0/Needle-0.md')).toBeLessThan(
      hits.map((h) => h.path).indexOf('tree/d0/e5/Needle-5.md'),
    );
  });

  it('skips a folder that vanishes between being found and being read, and finds the rest', async () => {
    for (const name of ['gone', 'kept']) {
      await fs.mkdir(path.join(root, 'walk', name), { recursive: true });
      await fs.writeFile(path.join(root, 'walk', name, `${name}-needle.txt`), '');
    }
    const { dev } = await fs.stat(root);
    for (const threads of [1, 0]) {
      // A real reader on the real folder; the folder goes away just before it is read.
      const inner = reader(threads);
      const vanishing = Object.assign(Object.create(inner) as DirReader, {
        async scan(dir: string, d: number | bigint, filter: PreparedNameFilter, size?: number) {
          // Folders are read through their descriptors (`/proc/self/fd/N`): find the name.
          const real = dir.startsWith('/proc/') ? await fs.readlink(dir) : dir;
          if (path.basename(real) === 'gone') await fs.rm(real, { recursive: true, force: true });
          return inner.scan(dir, d, filter, size);
        },
      });
      const hits = [];
      for await (const hit of searchTree(await access(), '/', 'needle', { dev, reader: vanishing }))
        hits.push(hit.path);
      expect(hits).toEqual(['walk/kept/kept-needle.txt']);
      await fs.mkdir(path.join(root, 'walk', 'gone'));
      await fs.writeFile(path.join(root, 'walk', 'gone', 'gone-needle.txt'), '');
    }
  });

  it('reads a pinned folder removed since it was pinned as empty, on every way', async () => {
    const dir = path.join(root, 'docs');
    const { dev } = await fs.stat(dir);
    const folder = await pin(dir);
    await fs.rm(dir, { recursive: true });
    for (const r of [reader(1), reader(0), reader(0, undefined, true)]) {
      expect((await r.read(folder, dev)).names).toEqual([]);
    }
  });

  it('tells identical snapshots from changed ones', async () => {
    const dir = path.join(root, 'docs');
    const { dev } = await fs.stat(dir);
    const r = reader(1);
    const first = await r.read(await pin(dir), dev);
    expect(first.sameAs(await r.read(await pin(dir), dev))).toBe(true);
    await fs.appendFile(path.join(dir, 'a.txt'), '!');
    expect(first.sameAs(await r.read(await pin(dir), dev))).toBe(false);
    await fs.writeFile(path.join(dir, 'b.txt'), '');
    expect(first.sameAs(await r.read(await pin(dir), dev))).toBe(false);
  });

  it('reuses released buffers and starts new threads after its threads stop', async () => {
    const dir = path.join(root, 'many');
    await fs.mkdir(dir);
    for (let i = 0; i < 1200; i++) await fs.writeFile(path.join(dir, `f${i}`), String(i));
    const { dev } = await fs.stat(dir);
    const r = reader(1);
    const first = await r.read(await pin(dir), dev);
    const expected = byName(first);
    first.release();
    expect(first.data.byteLength).toBe(0); // handed back to the thread
    expect(byName(await r.read(await pin(dir), dev))).toEqual(expected);
    await r.close();
    const again = await r.read(await pin(dir), dev);
    expect(again.origin).toBeDefined();
    expect(byName(again)).toEqual(expected);
  });
});

describe('listings', () => {
  const names = (items: FileItem[]) => items.map((i) => i.name);
  const opts = { readHeader: true, sorting: SORTING };

  it('lists the same in C, on a reader thread and on the main thread', async () => {
    const a = await testAccessOf();
    const list = (threads: number, native: boolean) =>
      a.withFolder('/docs', (dir) => listDirectory(a.access, dir, '/docs', opts, deps(threads, native)));
    const threaded = await list(1, false);
    const here = await list(0, false);
    expect(threaded).toEqual(here);
    expect(await list(1, true)).toEqual(here);
    expect(names(here.items)).toEqual(['sub', 'a.txt', 'link', 'noext', 'pipe']);
    expect(here.items.find((i) => i.name === 'link')).toMatchObject({ isSymlink: true, type: 'text' });
    expect(here.items.find((i) => i.name === 'pipe')).toMatchObject({ type: 'blob' });
  });

  it('remembers header types and reads the header again when the file changes', async () => {
    const a = await testAccessOf();
    const file = path.join(root, 'docs', 'noext');
    const d = deps();
    const typeOf = async () =>
      (await a.withFolder('/docs', (dir) => listDirectory(a.access, dir, '/docs', opts, d))).items.find(
        (i) => i.name === 'noext',
      )!.type;
    expect(await typeOf()).toBe('text');
    expect(d.types.hits).toBe(0);
    expect(await typeOf()).toBe('text');
    expect(d.types.hits).toBe(2); // noext, and a.txt as the target of `link`, a name without extension

    // Same size, same mtime, other bytes: only the ctime tells.
    const { atime, mtime } = await fs.stat(file);
    await fs.writeFile(file, Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]));
    await fs.utimes(file, atime, mtime);
    expect(await typeOf()).toBe('blob');

    // Another size.
    await fs.writeFile(file, 'text again');
    expect(await typeOf()).toBe('text');
  });

  it('types an empty file without opening it, as reading its empty header would', async () => {
    const a = await testAccessOf();
    const dir = path.join(root, 'docs', 'sub');
    await fs.writeFile(path.join(dir, 'empty'), '');
    await fs.writeFile(path.join(dir, 'empty.bin'), '');
    await fs.writeFile(path.join(dir, 'empty.png'), '');
    const d = deps();
    const list = () => a.withFolder('/docs/sub', (f) => listDirectory(a.access, f, '/docs/sub', opts, d));
    const types = (await list()).items.map((i) => [i.name, i.type]);
    // File Browser reads the empty header and sniffs it: text; the extension's type wins for media.
    expect(types).toEqual(
      expect.arrayContaining([
        ['empty', 'text'],
        ['empty.bin', 'text'],
        ['empty.png', 'image'],
      ]),
    );
    await list();
    // Nothing of them was looked up in the header cache: no header was read to remember.
    expect(d.types.hits).toBe(0);
    // Once it has bytes, its header is read.
    await fs.writeFile(path.join(dir, 'empty.bin'), Buffer.from([0, 1, 2]));
    expect((await list()).items.find((i) => i.name === 'empty.bin')?.type).toBe('blob');
  });

  it('answers an unchanged folder from the listing cache and a changed one afresh', async () => {
    const a = await testAccessOf();
    const dir = path.join(root, 'docs', 'sub');
    await fs.writeFile(path.join(dir, 'x.bin'), Buffer.from([0, 1, 2]));
    const d = deps();
    const list = async () =>
      whole(await a.withFolder('/docs/sub', (f) => listDirectoryJson(a.access, f, '/docs/sub', opts, d)));
    const first = await list();
    expect(await list()).toBe(first); // the very same text
    const parsed = JSON.parse(`{${first.toString()}}`);
    expect(parsed).toEqual(
      await a.withFolder('/docs/sub', (f) => listDirectory(a.access, f, '/docs/sub', opts, d)),
    );

    await fs.writeFile(path.join(dir, 'y.txt'), 'new');
    const changed = JSON.parse(`{${(await list()).toString()}}`);
    expect(names(changed.items)).toEqual(['x.bin', 'y.txt']);
  });

  it('keys the listing cache by the rules and does not keep listings with links', async () => {
    const d = deps();
    const dir = path.join(root, 'docs');
    const listJson = (rules: Rule[] = []) =>
      inFolder('/docs', async (f) =>
        whole(await listDirectoryJson((await testAccessOf(rules)).access, f, '/docs', opts, d)),
      );
    const open = await listJson();
    expect(await listJson()).not.toBe(open); // has a link
    await fs.rm(path.join(dir, 'link'));
    const plain = await listJson();
    expect(await listJson()).toBe(plain);
    const denied = await listJson([{ regex: false, allow: false, path: '/docs/a.txt', regexp: null }]);
    expect(names(JSON.parse(`{${denied.toString()}}`).items)).toEqual(['sub', 'noext', 'pipe']);
    expect(names(JSON.parse(`{${plain.toString()}}`).items)).toEqual(['sub', 'a.txt', 'noext', 'pipe']);
  });
});

describe('big listings, streamed', () => {
  /** A folder of `n` files of several kinds (header-typed, by extension, a video with subtitles, a link, a sub-folder). */
  async function bigFolder(n: number, link = true): Promise<string> {
    const dir = path.join(root, 'big');
    await fs.mkdir(path.join(dir, 'sub'), { recursive: true });
    for (let i = 0; i < n; i++) {
      const name = `f-${i}.${['dat', 'txt', 'bin', 'png'][i % 4]}`;
      await fs.writeFile(path.join(dir, name), i % 8 === 0 ? Buffer.from([0, 1, 2]) : `text ${i}`);
    }
    await fs.writeFile(path.join(dir, 'clip.mp4'), 'x');
    await fs.writeFile(path.join(dir, 'clip.en.srt'), '1');
    await fs.writeFile(path.join(dir, 'naïve "quoted"\\name.dat'), 'q');
    if (link) await fs.symlink('f-1.txt', path.join(dir, 'link'));
    return dir;
  }

  it.each([
    ['name', false],
    ['name', true],
    ['size', false],
    ['modified', true],
  ])('sends the same bytes as the whole text, in pieces (by %s, asc %s)', async (by, asc) => {
    await bigFolder(1200);
    const a = await testAccessOf();
    const opts = { readHeader: true, sorting: { by, asc } };
    const d = { ...deps(), streamFrom: 100 };
    const json = await a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, d));
    const pieces = await streamed(json);
    expect(pieces.length).toBeGreaterThan(2); // 512 items a piece
    const listing = await a.withFolder('/big', (f) => listDirectory(a.access, f, '/big', opts, d));
    // The text File Browser's shape had before streaming: one JSON.stringify of the items.
    const expected = `"items":${JSON.stringify(listing.items)},"numDirs":${listing.numDirs},"numFiles":${listing.numFiles}`;
    expect(Buffer.concat(pieces).toString()).toBe(expected);
    expect(listing.items).toHaveLength(1205);
    expect(listing.items.find((i) => i.name === 'clip.mp4')?.subtitles).toEqual(['/big/clip.en.srt']);
    expect(listing.items.find((i) => i.name === 'f-8.dat')?.type).toBe('blob');
    expect(listing.items.find((i) => i.name === 'f-4.dat')?.type).toBe('text');
    // It has a link, whose entry the snapshot does not show: not kept.
    expect(d.rendered.size).toBe(0);
  });

  it('makes a small folder whole with the default threshold', async () => {
    await bigFolder(10);
    const a = await testAccessOf();
    const opts = { readHeader: true, sorting: SORTING };
    const json = await a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, deps()));
    const text = JSON.parse(`{${whole(json).toString()}}`);
    expect(text.numFiles).toBe(14);
    expect(text.numDirs).toBe(1);
  });

  it('renders a piece only when it is asked for', async () => {
    await bigFolder(1200);
    const a = await testAccessOf();
    const d = { ...deps(), streamFrom: 100 };
    const opts = { readHeader: true, sorting: SORTING };
    const json = await a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, d));
    if ('length' in json) throw new Error('not streamed');
    const it = json.pieces[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value.toString().startsWith('"items":[{"path":"/big/sub",')).toBe(true);
    // A client that leaves stops the rendering: the rest is never made.
    await it.return?.(undefined);
    expect((await it.next()).done).toBe(true);
  });

  /** Listing dependencies whose cache puts anything over 16 KB in its place for one big listing. */
  function bigDeps(clock: { now: number }) {
    return {
      ...deps(),
      streamFrom: 100,
      rendered: new ListingCache({
        maxBytes: 64 * 1024,
        bigBytes: 8 << 20,
        bigIdleMs: 1000,
        now: () => clock.now,
      }),
    };
  }

  it('keeps a big listing once sent whole, reuses it while the folder is unchanged and asked for', async () => {
    const dir = await bigFolder(1200, false);
    const a = await testAccessOf();
    const clock = { now: 0 };
    const d = bigDeps(clock);
    const opts = { readHeader: true, sorting: SORTING };
    const list = () => a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, d));
    const pieces = await streamed(await list());
    expect(d.rendered.size).toBe(1);
    const again = await list();
    if (!('length' in again)) throw new Error('streamed again');
    // Kept deflated, piece by piece: the same pieces come back.
    expect([...again.pieces]).toEqual(pieces);
    expect(again.length).toBe(Buffer.concat(pieces).length);

    // Changed: made afresh, and that one kept.
    await fs.writeFile(path.join(dir, 'f-0.dat'), 'changed');
    const changed = await streamed(await list());
    expect(Buffer.concat(changed).equals(Buffer.concat(pieces))).toBe(false);
    clock.now += 999;
    expect('length' in (await list())).toBe(true);
    // Not asked for in a whole second of its clock: dropped.
    clock.now += 1999;
    expect('length' in (await list())).toBe(false);
  });

  it('keeps nothing of a big listing whose client left before its end', async () => {
    await bigFolder(1200, false);
    const a = await testAccessOf();
    const d = bigDeps({ now: 0 });
    const opts = { readHeader: true, sorting: SORTING };
    const json = await a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, d));
    if ('length' in json) throw new Error('not streamed');
    const it = json.pieces[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
    expect(d.rendered.size).toBe(0);
  });

  it('keeps no big listing bigger than its place', async () => {
    await bigFolder(1200, false);
    const a = await testAccessOf();
    const d = {
      ...deps(),
      streamFrom: 100,
      rendered: new ListingCache({ maxBytes: 64 * 1024, bigBytes: 100 * 1024 }),
    };
    const opts = { readHeader: true, sorting: SORTING };
    await streamed(await a.withFolder('/big', (f) => listDirectoryJson(a.access, f, '/big', opts, d)));
    expect(d.rendered.size).toBe(0);
  });
});

describe('listings sorted as indexes', () => {
  /**
   * A folder with what each sorting has to tell apart: folders, names that differ in case only,
   * in digit runs, in bytes beyond ASCII; equal sizes and equal times (ties keep the folder's
   * order); links to a file, to a folder, to nothing and out of the root; a video with
   * subtitles; a pipe; a hidden file.
   */
  async function variedFolder(): Promise<string> {
    const dir = path.join(root, 'varied');
    for (const sub of ['Sub', 'alpha', 'b10', 'b9', 'subs'])
      await fs.mkdir(path.join(dir, sub), { recursive: true });
    await fs.writeFile(path.join(dir, 'subs', 'clip.fr.srt'), '1');
    const names = [
      'A.txt',
      'a.txt',
      'B2.TXT',
      'b10.txt',
      'x007',
      'x7',
      'naïve "q"\\n.dat',
      'Ärger.md',
      '日本.txt',
    ];
    names.push(
      'clip.mp4',
      'clip.en.srt',
      'empty.dat',
      'same1',
      'same2',
      'same3',
      '.hidden',
      'Z.txt',
      'z.TXT',
    );
    for (let i = 0; i < 60; i++) names.push(`f-${i}.${['dat', 'txt', 'bin', 'png', 'mp4'][i % 5]}`);
    for (const [k, name] of names.entries()) {
      const file = path.join(dir, name);
      const size = name.startsWith('same') ? 7 : (k * 37) % 50;
      await fs.writeFile(file, k % 7 === 0 ? Buffer.alloc(size) : 'x'.repeat(size));
      const time = 1_600_000_000 + (k % 11) + (k % 3) * 0.123456789;
      await fs.utimes(file, time, time);
    }
    await fs.symlink('a.txt', path.join(dir, 'link-file'));
    await fs.symlink('alpha', path.join(dir, 'link-dir'));
    await fs.symlink('nowhere', path.join(dir, 'link-broken'));
    await fs.symlink('/', path.join(dir, 'link-out'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    return dir;
  }

  /**
   * The names of `items` in the order File Browser sorts them (contract 5.2), written out with an
   * object per entry as the listing sorted them before it sorted indexes, starting from the
   * folder's own order (a stable sort keeps it between equals).
   */
  async function referenceOrder(dir: string, items: FileItem[], by: string, asc: boolean): Promise<string[]> {
    const order = await fs.readdir(dir);
    const entries = await Promise.all(
      [...items]
        .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name))
        .map(async (item) => {
          const file = path.join(dir, item.name);
          // A link's time is its target's, or its own when it leads nowhere.
          const st =
            item.isSymlink && item.type !== 'invalid_link'
              ? await fs.stat(file, { bigint: true })
              : await fs.lstat(file, { bigint: true });
          return { ...item, ns: st.mtimeNs };
        }),
    );
    type Entry = (typeof entries)[number];
    const byName = (reverse: boolean) => (a: Entry, b: Entry) => {
      if (a.isDir !== b.isDir) return a.isDir ? -1 : 1;
      const c = naturalCompare(a.name.toLowerCase(), b.name.toLowerCase());
      return reverse ? -c : c;
    };
    const sizeKey = (e: Entry) => (e.isDir ? e.size - 2 ** 31 : e.size);
    const time = (a: Entry, b: Entry) => (a.ns === b.ns ? 0 : a.ns < b.ns ? -1 : 1);
    const compare =
      by === 'size'
        ? (a: Entry, b: Entry) => (asc ? sizeKey(a) - sizeKey(b) : sizeKey(b) - sizeKey(a))
        : by === 'modified'
          ? (a: Entry, b: Entry) => (asc ? time(a, b) : time(b, a))
          : by === 'name' || asc
            ? byName(asc)
            : (a: Entry, b: Entry) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
    return entries.sort(compare).map((e) => e.name);
  }

  it.each([
    ['name', false],
    ['name', true],
    ['size', false],
    ['size', true],
    ['modified', false],
    ['modified', true],
    ['other', false],
    ['other', true],
  ])(
    'orders a varied folder as File Browser does, the same whole, streamed and cached (by %s, asc %s)',
    async (by, asc) => {
      const dir = await variedFolder();
      const a = await testAccessOf();
      const opts = { readHeader: true, sorting: { by, asc } };
      const d = deps();
      const listing = await a.withFolder('/varied', (f) => listDirectory(a.access, f, '/varied', opts, d));
      expect(listing.items.map((i) => i.name)).toEqual(await referenceOrder(dir, listing.items, by, asc));
      expect(listing.items.map((i) => i.name)).not.toContain('link-out');
      expect(listing.items.find((i) => i.name === 'link-dir')).toMatchObject({
        isDir: true,
        isSymlink: true,
      });
      expect(listing.items.find((i) => i.name === 'link-broken')?.type).toBe('invalid_link');
      expect(listing.items.find((i) => i.name === 'clip.mp4')?.subtitles).toEqual([
        '/varied/clip.en.srt',
        '/varied/subs/clip.fr.srt',
      ]);
      const expected = `"items":${JSON.stringify(listing.items)},"numDirs":${listing.numDirs},"numFiles":${listing.numFiles}`;
      const json = (streamFrom: number) =>
        a.withFolder('/varied', (f) => listDirectoryJson(a.access, f, '/varied', opts, { ...d, streamFrom }));
      expect(whole(await json(10_000)).toString()).toBe(expected);
      expect(Buffer.concat(await streamed(await json(8))).toString()).toBe(expected);

      // Without its links, subtitle folder and pipe the listing is kept, and answered from the cache.
      for (const name of ['link-file', 'link-dir', 'link-broken', 'link-out', 'pipe'])
        await fs.rm(path.join(dir, name));
      await fs.rm(path.join(dir, 'subs'), { recursive: true });
      const plain = await a.withFolder('/varied', (f) => listDirectory(a.access, f, '/varied', opts, d));
      expect(plain.items.map((i) => i.name)).toEqual(await referenceOrder(dir, plain.items, by, asc));
      const plainText = `"items":${JSON.stringify(plain.items)},"numDirs":${plain.numDirs},"numFiles":${plain.numFiles}`;
      expect(whole(await json(10_000)).toString()).toBe(plainText);
      expect(d.rendered.size).toBe(1);
      expect(whole(await json(10_000)).toString()).toBe(plainText);
    },
  );
});

describe('the big listing place', () => {
  /** A snapshot of `count` entries whose buffers, once released, are recorded as given back. */
  function snapshotOf(count: number, given: ArrayBuffer[], mtime = 1_700_000_000): DirSnapshot {
    const names = Array.from({ length: count }, (_, i) => `f-${i}.dat`);
    const data = new Float64Array(count * FIELDS);
    for (let i = 0; i < count; i++) {
      data[i * FIELDS + F_MODE] = 0o100644;
      data[i * FIELDS + 2] = mtime;
    }
    const snapshot = new DirSnapshot(names, data);
    snapshot.origin = { recycle: (buffer) => given.push(buffer) };
    return snapshot;
  }

  it('keeps the text deflated and a digest of the snapshot, whose buffers go back at once', () => {
    const cache = new ListingCache({ maxBytes: 64 * 1024, bigBytes: 8 << 20 });
    const given: ArrayBuffer[] = [];
    const kept = snapshotOf(2000, given);
    const text = [
      Buffer.from('"items":[{"name":"a"}'),
      Buffer.from(',{"name":"b"}],"numDirs":0,"numFiles":2'),
    ];
    const length = text[0]!.length + text[1]!.length;
    cache.set('k', kept, { pieces: text.map((t) => deflateRawSync(t)), packed: true, length });
    // The snapshot's numbers (2,000 entries: 144 KB) went back to their thread.
    expect(given.map((b) => b.byteLength)).toContain(2000 * FIELDS * 8);
    expect(cache.size).toBe(1);

    const hit = cache.get('k', snapshotOf(2000, []));
    expect(hit?.length).toBe(length);
    expect(Buffer.concat([...hit!.pieces]).equals(Buffer.concat(text))).toBe(true);
    // One second more on the files' clock: made afresh.
    expect(cache.get('k', snapshotOf(2000, [], 1_700_000_001))).toBeUndefined();
    expect(cache.size).toBe(0);
  });
  it('gives back to its thread only the buffers the thread keeps for the next folder', () => {
    const given: ArrayBuffer[] = [];
    const fits = Math.floor(SPARE_MAX_BYTES / (FIELDS * 8));
    snapshotOf(fits, given).release();
    expect(given.map((b) => b.byteLength)).toEqual([fits * FIELDS * 8]);
    // A folder of 100,000 entries: its 9 MB would be dropped there, and lie in an idle thread
    // that never collects; here they go with the next collection.
    given.length = 0;
    const big = snapshotOf(fits + 1, given);
    big.release();
    expect(given).toEqual([]);
    expect(big.data.length).toBe((fits + 1) * FIELDS);
  });
});
