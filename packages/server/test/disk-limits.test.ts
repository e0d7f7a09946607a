import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fromSystemError } from '../src/errors.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import {
  DISK_FULL,
  fillDisk,
  freeBytes,
  rootOnDisk,
  startWithSmallDisk,
  type SmallDisk,
} from './full-disk.js';
import { remountTmpfs } from './tools.js';

/**
 * A full disk, a read-only disk and a name over the file system's limit answer
 * a status and words a person understands; the old file stays; nothing is left behind.
 * The disk is a real tmpfs of 2 MiB mounted inside the test's folder.
 */
const WHY = 'the full and read-only disk tests need a real small file system';

let t: FilesApp | undefined;
let small: SmallDisk | undefined;
let disk: string | undefined;
afterEach(async () => {
  await small?.close();
  small = undefined;
  disk = undefined;
  await t?.close();
  t = undefined;
});

/** The app with its root (and, with `dbOnDisk`, its database and upload staging) on a small tmpfs. */
async function startOnTmpfs(opts: { dbOnDisk?: boolean } = {}): Promise<FilesApp | undefined> {
  small = await startWithSmallDisk('2m', WHY, rootOnDisk(opts));
  disk = small?.disk;
  return small?.app;
}

const free = freeBytes;

describe('a full disk', () => {
  it('PUT over an existing file answers 507; the old content stays and no staging file is left', async () => {
    const app = await startOnTmpfs();
    if (!app) return;
    const bob = await app.user('bob');
    const home = path.join(app.ctx.config.root, 'bob');
    await fs.writeFile(path.join(home, 'notes.txt'), 'the old notes');
    await fillDisk(disk!);

    const res = await app.req(bob, {
      method: 'PUT',
      url: '/api/resources/notes.txt',
      payload: Buffer.alloc(64 * 1024, 'n'),
    });
    expect(res.statusCode).toBe(507);
    expect(res.body).toBe(DISK_FULL);
    expect(await fs.readFile(path.join(home, 'notes.txt'), 'utf8')).toBe('the old notes');
    expect(await fs.readdir(home)).toEqual(['notes.txt']);
  });

  it('POST of a new file answers 507 and leaves nothing: no file, no staging file, no folder made for it', async () => {
    const app = await startOnTmpfs();
    if (!app) return;
    const bob = await app.user('bob');
    const home = path.join(app.ctx.config.root, 'bob');
    await fillDisk(disk!);

    const res = await app.req(bob, {
      method: 'POST',
      url: '/api/resources/new/deep/upload.bin',
      payload: Buffer.alloc(64 * 1024, 'u'),
    });
    expect(res.statusCode).toBe(507);
    expect(res.body).toBe(DISK_FULL);
    expect(await fs.readdir(home)).toEqual([]);
  });

  it('a tus PATCH that fills the disk answers 507 and keeps nothing of itself; the upload then resumes or cancels cleanly', async () => {
    const app = await startOnTmpfs({ dbOnDisk: true });
    if (!app) return;
    const bob = await app.user('bob');
    const home = path.join(app.ctx.config.root, 'bob');
    const staging = path.join(disk!, 'db', 'uploads');
    const tus = (method: string, url: string, headers: Record<string, string> = {}, payload?: Buffer) =>
      app.req(bob, { method, url, headers: { 'tus-resumable': '1.0.0', ...headers }, payload });
    const patch = (url: string, offset: number, body: Buffer) =>
      tus(
        'PATCH',
        url,
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
        body,
      );
    const data = Buffer.alloc(600 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;

    expect((await tus('POST', '/api/tus/big.bin', { 'upload-length': String(data.length) })).statusCode).toBe(
      201,
    );
    const first = await patch('/api/tus/big.bin', 0, data.subarray(0, 100 * 1024));
    expect(first.statusCode).toBe(204);
    // Room for part of the rest: the request writes what fits, then meets the full disk.
    const filler = await fillDisk(disk!, 256 * 1024);
    const before = await free(disk!);
    const full = await patch('/api/tus/big.bin', 100 * 1024, data.subarray(100 * 1024));
    expect(full.statusCode).toBe(507);
    expect(full.body).toBe(DISK_FULL);
    expect(await free(disk!)).toBe(before);
    const at = await tus('HEAD', '/api/tus/big.bin');
    expect(at.headers['upload-offset']).toBe(String(100 * 1024));
    expect(await fs.readdir(home)).toEqual([]);

    // Space freed, the client resumes where it was told and the file arrives whole.
    await fs.rm(filler);
    const rest = await patch('/api/tus/big.bin', 100 * 1024, data.subarray(100 * 1024));
    expect(rest.statusCode).toBe(204);
    expect(rest.headers['upload-offset']).toBe(String(data.length));
    expect((await fs.readFile(path.join(home, 'big.bin'))).equals(data)).toBe(true);
    expect(await fs.readdir(staging)).toEqual([]);

    // Or the client gives up: cancelling leaves nothing.
    expect(
      (await tus('POST', '/api/tus/other.bin', { 'upload-length': String(data.length) })).statusCode,
    ).toBe(201);
    await fillDisk(disk!, 128 * 1024);
    expect((await patch('/api/tus/other.bin', 0, data)).statusCode).toBe(507);
    expect((await tus('DELETE', '/api/tus/other.bin')).statusCode).toBe(204);
    expect((await tus('HEAD', '/api/tus/other.bin')).statusCode).toBe(404);
    expect(await fs.readdir(staging)).toEqual([]);
    expect(await fs.readdir(home)).toEqual(['big.bin']);
  });

  it('a copy of a folder that does not fit answers 507 and leaves no part of the copy, new or merged', async () => {
    const app = await startOnTmpfs();
    if (!app) return;
    const bob = await app.user('bob');
    const home = path.join(app.ctx.config.root, 'bob');
    await fs.mkdir(path.join(home, 'album/inner'), { recursive: true });
    for (const name of ['a.bin', 'b.bin', 'inner/c.bin', 'inner/d.bin'])
      await fs.writeFile(path.join(home, 'album', name), Buffer.alloc(150 * 1024, name));
    await fs.mkdir(path.join(home, 'merge'));
    await fs.writeFile(path.join(home, 'merge/keep.txt'), 'kept');
    // Room for about two of the four files.
    await fillDisk(disk!, 320 * 1024);
    const before = await free(disk!);

    const copy = await app.req(bob, {
      method: 'PATCH',
      url: '/api/resources/album?action=copy&destination=%2Fcopy',
    });
    expect(copy.statusCode).toBe(507);
    expect(copy.body).toBe(DISK_FULL);
    expect((await fs.readdir(home)).sort()).toEqual(['album', 'merge']);
    expect(await free(disk!)).toBe(before);

    const merged = await app.req(bob, {
      method: 'PATCH',
      url: '/api/resources/album?action=copy&destination=%2Fmerge&override=true',
    });
    expect(merged.statusCode).toBe(507);
    expect(await fs.readdir(path.join(home, 'merge'))).toEqual(['keep.txt']);
    expect(await fs.readFile(path.join(home, 'merge/keep.txt'), 'utf8')).toBe('kept');
    expect(await free(disk!)).toBe(before);
  });
});

describe('a read-only disk', () => {
  it('answers 403 "the folder is read-only" to writes, moves and deletes, and changes nothing', async () => {
    const app = await startOnTmpfs();
    if (!app) return;
    const bob = await app.user('bob');
    const home = path.join(app.ctx.config.root, 'bob');
    await fs.writeFile(path.join(home, 'a.txt'), 'unchanged');
    remountTmpfs(disk!, 'ro');
    try {
      const readOnly = '403 Forbidden (the folder is read-only)\n';
      for (const opts of [
        { method: 'PUT' as const, url: '/api/resources/a.txt', payload: 'new' },
        { method: 'POST' as const, url: '/api/resources/b.txt', payload: 'new' },
        { method: 'POST' as const, url: '/api/resources/folder/' },
        { method: 'PATCH' as const, url: '/api/resources/a.txt?action=rename&destination=%2Fc.txt' },
        { method: 'PATCH' as const, url: '/api/resources/a.txt?action=copy&destination=%2Fd.txt' },
        { method: 'DELETE' as const, url: '/api/resources/a.txt' },
      ]) {
        const res = await app.req(bob, opts);
        expect(res.statusCode, `${opts.method} ${opts.url}`).toBe(403);
        expect(res.body, `${opts.method} ${opts.url}`).toBe(readOnly);
      }
      // Reading still works.
      expect((await app.get(bob, '/api/raw/a.txt')).body).toBe('unchanged');
      expect(await fs.readdir(home)).toEqual(['a.txt']);
      expect(await fs.readFile(path.join(home, 'a.txt'), 'utf8')).toBe('unchanged');
    } finally {
      remountTmpfs(disk!, 'rw');
    }
  });
});

describe('a name longer than the file system allows', () => {
  it('answers 400 naming the limit of 255 bytes, counted in bytes, not characters', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    const limit = '400 Bad Request (a name in the path is too long: a name may have at most 255 bytes)\n';
    // 128 characters, 256 bytes in UTF-8.
    for (const name of ['L'.repeat(256), 'é'.repeat(128)]) {
      const url = `/api/resources/${encodeURIComponent(name)}`;
      const res = await t.req(bob, { method: 'POST', url, payload: 'x' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toBe(limit);
      expect((await t.req(bob, { method: 'PUT', url, payload: 'x' })).body).toBe(limit);
    }
    expect(await fs.readdir(path.join(t.root, 'bob'))).toEqual([]);
  });
});

describe('the one error mapping', () => {
  it('gives every operating-system limit a status and a message a person understands', () => {
    const cases: Array<[string, number, RegExp, Record<string, string>?]> = [
      ['ENOSPC', 507, /^the disk is full/],
      ['SQLITE_FULL', 507, /^the disk is full/],
      ['EDQUOT', 507, /quota .* is used up/],
      ['ENAMETOOLONG', 400, /at most 255 bytes/],
      ['EROFS', 403, /^the folder is read-only$/],
      ['EACCES', 403, /does not allow the server/],
      ['EPERM', 403, /does not allow the server/],
      ['EEXIST', 409, /exists/],
      ['ENOTEMPTY', 409, /not empty/],
      ['EISDIR', 409, /a folder is where a file is expected/],
      ['EFBIG', 413, /larger than the file system allows/],
      ['EMFILE', 503, /too many files open/, { 'Retry-After': '5' }],
      ['ENFILE', 503, /too many files open/, { 'Retry-After': '5' }],
    ];
    for (const [code, status, message, headers] of cases) {
      const mapped = fromSystemError(Object.assign(new Error('driver words'), { code }));
      expect(mapped?.status, code).toBe(status);
      expect(mapped?.message, code).toMatch(message);
      expect(mapped?.told, code).toBe(true);
      if (headers) expect(mapped?.headers, code).toEqual(headers);
    }
    expect(fromSystemError(Object.assign(new Error('x'), { code: 'EIO' }))).toBeUndefined();
  });
});
