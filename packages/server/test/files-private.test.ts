import fs from 'node:fs/promises';
import path from 'node:path';
import type { FileInfo } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * File Browser's defaults put the database in the served folder (root `.`, `./filebrowser.db`).
 * It holds password hashes, sessions and the token signing key: no user may ever reach it, nor
 * the staging files of other people's uploads.
 */
let t: FilesApp;
let token: string;

beforeEach(async () => {
  t = await startFilesApp((base) => ({ cacheDir: '', database: path.join(base, 'root', 'filebrowser.db') }), {
    pathEnv: '',
  });
  token = await t.user('whole', { scope: '/' });
  await fs.mkdir(path.join(t.root, 'uploads'));
  await fs.writeFile(path.join(t.root, 'uploads', 'mine.txt'), 'mine');
  await fs.writeFile(path.join(t.root, 'notes.txt'), 'notes');
});
afterEach(async () => {
  await t.close();
});

const PRIVATE = ['filebrowser.db', 'filebrowser.db-wal', 'filebrowser.db-shm', '.filebrowser-uploads'];

describe('the database inside the served folder', () => {
  it('is neither listed nor readable, also through links, archives and search', async () => {
    // Put a staging folder in place with an upload in progress.
    await t.req(token, {
      method: 'POST',
      url: '/api/tus/uploads/big.bin',
      headers: { 'upload-length': '10', 'tus-resumable': '1.0.0' },
    });
    const onDisk = await fs.readdir(t.root);
    expect(onDisk).toEqual(expect.arrayContaining(['filebrowser.db', '.filebrowser-uploads']));
    const names = (JSON.parse((await t.get(token, '/api/resources/')).body) as FileInfo).items!.map(
      (i) => i.name,
    );
    for (const name of PRIVATE) expect(names).not.toContain(name);
    expect(names).toEqual(expect.arrayContaining(['uploads', 'notes.txt']));

    for (const url of [
      '/api/raw/filebrowser.db',
      '/api/resources/filebrowser.db',
      '/api/resources/filebrowser.db?checksum=md5',
      '/api/resources/.filebrowser-uploads/',
    ]) {
      expect((await t.get(token, url)).statusCode, url).toBe(403);
    }
    await fs.symlink('filebrowser.db', path.join(t.root, 'db-link'));
    expect((await t.get(token, '/api/raw/db-link')).statusCode).toBe(403);

    const archive = await t.get(token, '/api/raw/?algo=tar');
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('filebrowser.db'))).toBe(false);
    expect(archive.rawPayload.includes(Buffer.from('SQLite format 3'))).toBe(false);
    expect(archive.rawPayload.includes(Buffer.from('notes'))).toBe(true);

    const search = await t.get(token, '/api/search/?query=filebrowser');
    expect(search.body).toBe('');
    // The user's own folder named "uploads" is theirs as usual.
    expect(JSON.parse((await t.get(token, '/api/resources/uploads/mine.txt')).body).content).toBe('mine');
  });

  it('cannot be replaced, moved, copied or deleted', async () => {
    const attempts = [
      { method: 'POST' as const, url: '/api/resources/filebrowser.db?override=true', payload: 'x' },
      { method: 'POST' as const, url: '/api/resources/filebrowser.db-journal', payload: 'x' },
      { method: 'PUT' as const, url: '/api/resources/filebrowser.db', payload: 'x' },
      { method: 'DELETE' as const, url: '/api/resources/filebrowser.db' },
      {
        method: 'PATCH' as const,
        url: '/api/resources/filebrowser.db?action=rename&destination=%2Fstolen.db',
      },
      { method: 'PATCH' as const, url: '/api/resources/filebrowser.db?action=copy&destination=%2Fstolen.db' },
      {
        method: 'PATCH' as const,
        url: '/api/resources/notes.txt?action=rename&destination=%2Ffilebrowser.db&override=true',
      },
    ];
    for (const a of attempts) {
      const res = await t.req(token, a);
      expect(res.statusCode, `${a.method} ${a.url}`).toBe(403);
    }
    expect((await fs.readFile(path.join(t.root, 'filebrowser.db'))).subarray(0, 15).toString()).toBe(
      'SQLite format 3',
    );
    expect(await fs.readFile(path.join(t.root, 'notes.txt'), 'utf8')).toBe('notes');
    expect(await fs.readdir(t.root)).not.toContain('stolen.db');
  });

  it('uploads still work, staged out of sight', async () => {
    const created = await t.req(token, {
      method: 'POST',
      url: '/api/tus/uploads/new.txt',
      headers: { 'upload-length': '5', 'tus-resumable': '1.0.0' },
    });
    expect(created.statusCode).toBe(201);
    expect(await fs.readdir(path.join(t.root, '.filebrowser-uploads'))).toHaveLength(1);
    const done = await t.req(token, {
      method: 'PATCH',
      url: '/api/tus/uploads/new.txt',
      headers: {
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
        'tus-resumable': '1.0.0',
      },
      payload: 'hello',
    });
    expect(done.statusCode).toBe(204);
    expect(await fs.readFile(path.join(t.root, 'uploads', 'new.txt'), 'utf8')).toBe('hello');
    expect(await fs.readdir(path.join(t.root, '.filebrowser-uploads'))).toEqual([]);
  });

  it('in a subfolder makes that folder impossible to delete or move as a whole', async () => {
    await t.close();
    t = await startFilesApp(
      (base) => ({ cacheDir: '', database: path.join(base, 'root', 'data', 'fb.db') }),
      {
        pathEnv: '',
      },
    );
    const whole = await t.user('whole', { scope: '/' });
    await fs.writeFile(path.join(t.root, 'data', 'readme.txt'), 'r');
    expect((await t.req(whole, { method: 'DELETE', url: '/api/resources/data' })).statusCode).toBe(403);
    const move = await t.req(whole, {
      method: 'PATCH',
      url: '/api/resources/data?action=rename&destination=%2Fmoved',
    });
    expect(move.statusCode).toBe(403);
    const copy = await t.req(whole, {
      method: 'PATCH',
      url: '/api/resources/data?action=copy&destination=%2Fcopy',
    });
    expect(copy.statusCode).toBe(403);
    expect((await fs.readdir(path.join(t.root, 'data'))).sort()).toEqual(
      expect.arrayContaining(['fb.db', 'readme.txt']),
    );
    // A user whose scope is the database's folder itself sees nothing of it.
    const inside = await t.user('inside', { scope: '/data' });
    const names = (JSON.parse((await t.get(inside, '/api/resources/')).body) as FileInfo).items!.map(
      (i) => i.name,
    );
    expect(names).toEqual(['readme.txt']);
  });
});
