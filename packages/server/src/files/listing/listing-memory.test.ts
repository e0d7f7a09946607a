import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNodeScript } from '../../../test/node-script.js';

const SRC = new URL('../../', import.meta.url).href;
const TEST = new URL('../../../test/', import.meta.url).href;
const ENTRIES = 20_000;

/**
 * In a process of its own, with the V8 settings of a listening server (`startup-memory.ts`):
 * lists the folder `/big` of `root` as the resources route does (streamed, `PIECE_ITEMS` items a
 * piece). Once the first piece has been taken, a full collection finds what the listing holds
 * while the rest is sent: on a server that is what lives for the seconds a client takes to
 * read 100,000 items, so what the collector moves to the old generation, where it lies dead until
 * the next full collection. Answers those bytes per entry, and the listing's length.
 */
function heldWhileSent(root: string): { perEntry: number; length: number } {
  const script = `
    const src = ${JSON.stringify(SRC)};
    const { holdStartupGrowth, releaseStartupGrowth } = await import(src + 'startup-memory.ts');
    holdStartupGrowth();
    const { testAccess } = await import(${JSON.stringify(TEST)} + 'files-helpers.ts');
    const { listDirectoryJson } = await import(src + 'files/listing/listing-json.ts');
    const { ListingCache } = await import(src + 'files/listing/listing-cache.ts');
    const { DirReader } = await import(src + 'files/listing/dir-snapshot.ts');
    const { AdaptiveIo } = await import(src + 'files/listing/adaptive-io.ts');
    const { TypeCache } = await import(src + 'files/listing/type-cache.ts');
    releaseStartupGrowth();
    const io = new AdaptiveIo();
    const deps = { io, reader: new DirReader({ threads: 1, io }), types: new TypeCache(), rendered: new ListingCache() };
    const t = await testAccess(${JSON.stringify(root)});
    const opts = { readHeader: true, sorting: { by: 'name', asc: false } };
    const list = (folder) => t.withFolder(folder, (f) => listDirectoryJson(t.access, f, folder, opts, deps));
    const drain = async (json) => {
      let length = 0;
      if ('length' in json) for (const p of json.pieces) length += p.length;
      else for await (const p of json.pieces) length += p.length;
      return length;
    };
    // Every path once (compiled, caches filled), then from a collected heap.
    await drain(await list('/small'));
    await drain(await list('/big'));
    deps.rendered.clear();
    globalThis.gc();
    const base = process.memoryUsage().heapUsed;
    const json = await list('/big');
    if ('length' in json) throw new Error('not streamed');
    const it = json.pieces[Symbol.asyncIterator]();
    let length = (await it.next()).value.length;
    globalThis.gc();
    const held = process.memoryUsage().heapUsed - base;
    for (let r = await it.next(); !r.done; r = await it.next()) length += r.value.length;
    await deps.reader.close();
    await t.close();
    console.log(JSON.stringify({ perEntry: held / ${ENTRIES}, length }));
  `;
  return runNodeScript<{ perEntry: number; length: number }>(script, ['--expose-gc']);
}

let root: string;

// 20,000 files made one by one: a bound for a busy machine (the full run met 30 s), not a measure.
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-listing-memory-'));
  const big = path.join(root, 'big');
  await fs.mkdir(big);
  await fs.mkdir(path.join(root, 'small'));
  await fs.writeFile(path.join(root, 'small', 'a.txt'), 'a');
  // As the bench's big folder: two thirds of unknown extension (empty: typed without a read).
  for (let i = 0; i < ENTRIES; i++) {
    await fs.writeFile(
      path.join(big, `file-${String(i).padStart(6, '0')}.${i % 3 === 0 ? 'txt' : 'dat'}`),
      '',
    );
  }
}, 180_000);

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
}, 180_000);

describe('a big listing being sent', () => {
  it('holds its names and a few bytes an entry, not an object per entry', () => {
    const { perEntry, length } = heldWhileSent(root);
    expect(length).toBeGreaterThan(ENTRIES * 150);
    // Measured: 57 bytes an entry (the names, a type code and the sorted indexes); with an
    // object per entry (the rows and their arrays) before: 206.
    expect(perEntry).toBeLessThan(100);
  });
});
