import fs from 'node:fs/promises';
import path from 'node:path';
import type { TrashItem } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL, PASSWORD, renameWindow, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * A move, a rename or a restore that may not replace anything replaces nothing, whatever takes
 * its destination's name after it looked (a red-team finding: parallel MOVEs with `Overwrite: F`
 * onto one free name, or parallel restores of one name, each replaced the one before, for good,
 * by a user without the delete permission).
 *
 * The window is reached without a clock: the app's `beforeReplace` seam runs just before the
 * rename, and another user's file is put at the destination there.
 */
let t: FilesApp;
let carol: string;
const seam = renameWindow();

const file = (...p: string[]) => path.join(t.root, 'shared', ...p);
const read = (...p: string[]) => fs.readFile(file(...p), 'utf8');
const daveWrites = () => fs.writeFile(file('T.txt'), 'dave’s report');
const basic = (name: string) => 'Basic ' + Buffer.from(`${name}:${PASSWORD}`).toString('base64');

beforeEach(async () => {
  t = await startFilesApp({}, seam.build);
  // carol may move and create, not modify or delete.
  carol = await t.user('carol', {
    scope: '/shared',
    perm: { ...ALL, modify: false, delete: false },
  });
  await t.user('dave', { scope: '/shared' });
  await fs.writeFile(file('junk.txt'), 'carol’s junk');
});

afterEach(async () => {
  seam.clear();
  await t?.close();
});

describe('a move that may not replace', () => {
  it('through the web API refuses a name taken meanwhile: 409, both files kept', async () => {
    seam.next(daveWrites);
    const res = await t.req(carol, {
      method: 'PATCH',
      url: '/api/resources/junk.txt?action=rename&destination=%2FT.txt&override=false',
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.body).toContain('nothing was replaced');
    expect(await read('T.txt')).toBe('dave’s report');
    expect(await read('junk.txt')).toBe('carol’s junk');
  });

  it('through WebDAV (Overwrite: F) refuses a name taken meanwhile, both files kept', async () => {
    seam.next(daveWrites);
    const res = await t.app.inject({
      method: 'MOVE' as 'GET',
      url: '/dav/junk.txt',
      headers: { authorization: basic('carol'), destination: '/dav/T.txt', overwrite: 'F' },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(await read('T.txt')).toBe('dave’s report');
    expect(await read('junk.txt')).toBe('carol’s junk');
  });

  it('as a restore from the trash refuses its place taken meanwhile: the item stays in the trash', async () => {
    const dave = await t.user('dave2', { scope: '/shared' });
    await fs.writeFile(file('T.txt'), 'the first report');
    expect((await t.req(dave, { method: 'DELETE', url: '/api/resources/T.txt' })).statusCode).toBe(204);
    const [item] = (await t.get(dave, '/api/trash')).json<TrashItem[]>();
    seam.next(daveWrites);
    const res = await t.req(dave, { method: 'POST', url: `/api/trash/${item!.id}/restore` });
    expect(res.statusCode, res.body).toBe(409);
    expect(await read('T.txt')).toBe('dave’s report');
    expect((await t.get(dave, '/api/trash')).json<TrashItem[]>().map((i) => i.id)).toEqual([item!.id]);
  });

  it('keeps every file when many moves race for one free name: one wins, the others are refused', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `m${i}.txt`);
    for (const name of names) await fs.writeFile(file(name), name);
    const answers = await Promise.all(
      names.map((name, i) =>
        i % 2 === 0
          ? t.app.inject({
              method: 'MOVE' as 'GET',
              url: `/dav/${name}`,
              headers: { authorization: basic('carol'), destination: '/dav/P.txt', overwrite: 'F' },
            })
          : t.req(carol, {
              method: 'PATCH',
              url: `/api/resources/${name}?action=rename&destination=%2FP.txt&override=false`,
            }),
      ),
    );
    const moved = answers.filter((a) => a.statusCode < 300);
    expect(moved).toHaveLength(1);
    for (const a of answers) if (a.statusCode >= 300) expect([409, 412]).toContain(a.statusCode);
    const kept = [await read('P.txt')];
    for (const name of names)
      kept.push(
        ...(await read(name).then(
          (x) => [x],
          () => [],
        )),
      );
    expect(kept.sort()).toEqual([...names].sort());
  });

  it('as a copy refuses a name taken meanwhile, through the web API and WebDAV: 409, that file kept', async () => {
    seam.next(daveWrites);
    const api = await t.req(carol, {
      method: 'PATCH',
      url: '/api/resources/junk.txt?action=copy&destination=%2FT.txt&override=false',
    });
    expect(api.statusCode, api.body).toBe(409);
    expect(await read('T.txt')).toBe('dave’s report');
    await fs.rm(file('T.txt'));
    seam.next(daveWrites);
    const dav = await t.app.inject({
      method: 'COPY' as 'GET',
      url: '/dav/junk.txt',
      headers: { authorization: basic('carol'), destination: '/dav/T.txt', overwrite: 'F' },
    });
    expect(dav.statusCode, dav.body).toBe(409);
    expect(await read('T.txt')).toBe('dave’s report');
    expect(await read('junk.txt')).toBe('carol’s junk');
  });
});

describe('a copy that fails', () => {
  it('takes back only what it made: what another user put in its new folder meanwhile stays', async () => {
    await fs.mkdir(file('tree'));
    for (const n of ['a.txt', 'b.txt', 'c.txt']) await fs.writeFile(file('tree', n), n);
    await fs.mkdir(file('dest'));
    let copied = 0;
    const failAtSecond = async () => {
      copied++;
      if (copied === 1) {
        seam.next(failAtSecond);
        return;
      }
      await fs.writeFile(file('dest', 'tree', 'dave.txt'), 'dave’s notes');
      throw Object.assign(new Error('the disk failed'), { code: 'EIO' });
    };
    seam.next(failAtSecond);
    const res = await t.req(carol, {
      method: 'PATCH',
      url: '/api/resources/tree?action=copy&destination=%2Fdest%2Ftree&override=false',
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(500);
    expect(await fs.readdir(file('dest', 'tree'))).toEqual(['dave.txt']);
    expect(await read('dest', 'tree', 'dave.txt')).toBe('dave’s notes');
    expect((await fs.readdir(file('tree'))).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });
});
