import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TEXT_CONTENT_LIMIT, type FileInfo } from '@filebrowser/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/config-error.js';
import { loadConfig } from '../src/config/load.js';
import { serverRecordFromConfig } from '../src/config/server-record.js';
import { fileAccessFor } from '../src/files/access/access.js';
import { readTextBounded } from '../src/files/listing/info.js';
import { serverPaths } from '../src/files/access/private.js';
import { ResumableUploads } from '../src/uploads/resumable.js';
import type { ServerConfig } from '../src/config/types.js';
import { startTestApp, type TestApp } from './helpers.js';

/**
 * Resource exhaustion: pending tus uploads are bounded per user in count,
 * declared bytes and free disk space, abandoned ones are swept, and a resource's text content is
 * capped so that opening a big text file costs bounded memory.
 */

let t: TestApp;
const running: TestApp[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});

async function start(overrides: Partial<ServerConfig> = {}) {
  t = await startTestApp(overrides);
  running.push(t);
  for (const name of ['alice', 'bob']) {
    await t.createUser({ username: name, scope: `/${name}` });
    await fs.mkdir(path.join(t.root, name), { recursive: true });
  }
  return { alice: await t.login('alice'), bob: await t.login('bob') };
}

const post = (token: string, p: string, length: number | string) =>
  t.request(token, {
    method: 'POST',
    url: `/api/tus${p}`,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': String(length) },
  });
const patch = (token: string, p: string, offset: number, body: string) =>
  t.request(token, {
    method: 'PATCH',
    url: `/api/tus${p}`,
    headers: {
      'content-type': 'application/offset+octet-stream',
      'upload-offset': String(offset),
      'tus-resumable': '1.0.0',
    },
    payload: body,
  });

const stagingDir = () => serverPaths(t.ctx.config).uploadsDir;
const stagingFiles = async () => (await fs.readdir(stagingDir()).catch(() => [] as string[])).sort();
const pendingOf = async (username: string) => {
  const user = (await t.ctx.store.users.getByUsername(username))!;
  return (await t.ctx.store.uploads.all()).filter((u) => u.userId === user.id);
};

describe('upload limit options', () => {
  it('come from flags, FB_* variables and the config file, are saved in the server record, and are checked', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-bounds-config-'));
    try {
      const places = { cwd: dir, home: dir, systemDir: path.join(dir, 'etc') };
      await fs.writeFile(path.join(dir, '.filebrowser.json'), JSON.stringify({ uploadsExpiry: '30m' }));
      const config = loadConfig(
        ['--uploadsPendingLimit', '5'],
        { FB_UPLOADS_PENDING_BYTES: '1048576' },
        places,
      );
      expect(config).toMatchObject({
        uploadsPendingLimit: 5,
        uploadsPendingBytes: 1048576,
        uploadsExpiry: 1800,
      });
      expect(serverRecordFromConfig(config)).toMatchObject({
        uploadsPendingLimit: 5,
        uploadsPendingBytes: 1048576,
        uploadsExpiry: '30m',
      });
      await fs.rm(path.join(dir, '.filebrowser.json'));
      expect(loadConfig([], {}, places)).toMatchObject({
        uploadsPendingLimit: 100,
        uploadsPendingBytes: 200 * 1024 ** 3,
        uploadsExpiry: 24 * 3600,
      });
      expect(() => loadConfig(['--uploadsPendingLimit', '0'], {}, places)).toThrow(ConfigError);
      expect(() => loadConfig([], { FB_UPLOADS_EXPIRY: 'soon' }, places)).toThrow(
        /FB_UPLOADS_EXPIRY: expected a duration/,
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('pending tus uploads', () => {
  it('refuses the 101st pending upload of a user with 429 and a message, creating nothing', async () => {
    const { alice } = await start();
    expect(t.ctx.config.uploadsPendingLimit).toBe(100);
    for (let i = 0; i < 100; i++) expect((await post(alice, `/p/${i}.bin`, 10)).statusCode).toBe(201);
    const before = await stagingFiles();
    expect(before).toHaveLength(100);

    const refused = await post(alice, '/new-folder/101.bin', 10);
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('100 uploads are already in progress');
    expect(refused.body).toContain('finish or cancel one');
    // Nothing on disk: neither the target's folder nor a staging file; no record either.
    await expect(fs.stat(path.join(t.root, 'alice', 'new-folder'))).rejects.toThrow();
    expect(await stagingFiles()).toEqual(before);
    expect(await pendingOf('alice')).toHaveLength(100);

    // Restarting its own upload to the same path replaces it: no new place is needed.
    expect((await post(alice, '/p/0.bin', 10)).statusCode).toBe(201);
    expect(await pendingOf('alice')).toHaveLength(100);
  });

  it('a finished or cancelled upload frees its place', async () => {
    const { alice } = await start({ uploadsPendingLimit: 3 });
    for (const name of ['a', 'b', 'c']) expect((await post(alice, `/${name}.txt`, 5)).statusCode).toBe(201);
    expect((await post(alice, '/d.txt', 5)).statusCode).toBe(429);

    expect((await patch(alice, '/a.txt', 0, 'hello')).statusCode).toBe(204);
    expect(await fs.readFile(path.join(t.root, 'alice', 'a.txt'), 'utf8')).toBe('hello');
    expect((await post(alice, '/d.txt', 5)).statusCode).toBe(201);
    expect((await post(alice, '/e.txt', 5)).statusCode).toBe(429);

    expect((await t.request(alice, { method: 'DELETE', url: '/api/tus/b.txt' })).statusCode).toBe(204);
    expect((await post(alice, '/e.txt', 5)).statusCode).toBe(201);
  });

  it('counts parallel creations against the limit: 40 at once with a limit of 10 make exactly 10', async () => {
    const { alice } = await start({ uploadsPendingLimit: 10 });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(alice, `/par/${i}.bin`, 100)),
    );
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c === 429)).toHaveLength(30);
    expect(await pendingOf('alice')).toHaveLength(10);
    expect(await stagingFiles()).toHaveLength(10);
  });

  it('limits per user: another user is unaffected by one user’s pending uploads', async () => {
    const { alice, bob } = await start({ uploadsPendingLimit: 2, uploadsPendingBytes: 100 });
    expect((await post(alice, '/1.bin', 50)).statusCode).toBe(201);
    expect((await post(alice, '/2.bin', 50)).statusCode).toBe(201);
    expect((await post(alice, '/3.bin', 1)).statusCode).toBe(429);
    expect((await post(bob, '/1.bin', 100)).statusCode).toBe(201);
    expect((await post(bob, '/2.bin', 0)).statusCode).toBe(201);
    expect(await pendingOf('bob')).toHaveLength(1);
  });

  it('refuses a declared length past the byte budget with 413, creating nothing', async () => {
    const { alice, bob } = await start({ uploadsPendingBytes: 1000 });
    expect((await post(alice, '/a.bin', 600)).statusCode).toBe(201);
    const before = await stagingFiles();

    const refused = await post(alice, '/over/b.bin', 401);
    expect(refused.statusCode).toBe(413);
    expect(refused.body).toContain('Upload-Length 401 is more than the 400 bytes left');
    expect(refused.body).toContain('(1000 in all)');
    await expect(fs.stat(path.join(t.root, 'alice', 'over'))).rejects.toThrow();
    expect(await stagingFiles()).toEqual(before);
    expect((await pendingOf('alice')).map((u) => u.path)).toEqual(['/a.bin']);

    expect((await post(alice, '/over/b.bin', 400)).statusCode).toBe(201);
    // A single upload larger than the whole budget is refused the same way.
    expect((await post(bob, '/huge.bin', 1001)).statusCode).toBe(413);
  });

  it('refuses a declared length larger than the free disk space with 413, creating nothing', async () => {
    const { alice } = await start({ uploadsPendingBytes: Number.MAX_SAFE_INTEGER });
    // More than the whole disk: the free space grows while other tests remove their files.
    const { blocks, bsize } = await fs.statfs(t.root);
    const tooBig = blocks * bsize + 1;
    const refused = await post(alice, '/big/disk.bin', tooBig);
    expect(refused.statusCode).toBe(413);
    expect(refused.body).toContain('more than the free space on the disk');
    await expect(fs.stat(path.join(t.root, 'alice', 'big'))).rejects.toThrow();
    expect(await stagingFiles()).toEqual([]);
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });
});

describe('sweeping abandoned uploads', () => {
  it('drops uploads without a byte for uploadsExpiry, records and staging files, and frees their places', async () => {
    const { alice } = await start({ uploadsExpiry: 600, uploadsPendingLimit: 2 });
    const uploads = new ResumableUploads(t.ctx);
    expect((await post(alice, '/old.txt', 10)).statusCode).toBe(201);
    expect((await patch(alice, '/old.txt', 0, 'half')).statusCode).toBe(204);
    expect((await post(alice, '/other.txt', 10)).statusCode).toBe(201);
    expect((await post(alice, '/third.txt', 10)).statusCode).toBe(429);
    const staged = (await t.ctx.store.uploads.all()).map((u) => u.staging);
    const now = Date.now();

    expect(await uploads.sweep(now)).toBe(0);
    expect(await uploads.sweep(now + 599_000)).toBe(0);
    for (const file of staged) await fs.stat(file);

    expect(await uploads.sweep(now + 601_000)).toBe(2);
    for (const file of staged) await expect(fs.stat(file)).rejects.toThrow();
    expect(await t.ctx.store.uploads.all()).toEqual([]);
    expect(await stagingFiles()).toEqual([]);
    expect((await t.request(alice, { method: 'HEAD', url: '/api/tus/old.txt' })).statusCode).toBe(404);
    await expect(fs.stat(path.join(t.root, 'alice', 'old.txt'))).rejects.toThrow();
    expect((await post(alice, '/third.txt', 10)).statusCode).toBe(201);
  });

  it('keeps uploads that got bytes recently, and removes staging files no record knows once they are old', async () => {
    const { alice } = await start({ uploadsExpiry: 600 });
    const uploads = new ResumableUploads(t.ctx);
    expect((await post(alice, '/live.txt', 10)).statusCode).toBe(201);
    expect((await patch(alice, '/live.txt', 0, 'abc')).statusCode).toBe(204);
    const [live] = await t.ctx.store.uploads.all();
    const now = Date.now();
    // Staging files left by a crash between their creation and their record: one old, one new.
    const oldOrphan = path.join(stagingDir(), 'old-orphan.part');
    const newOrphan = path.join(stagingDir(), 'new-orphan.part');
    await fs.writeFile(oldOrphan, 'left over');
    await fs.writeFile(newOrphan, 'being recorded');
    const past = new Date(now - 700_000);
    await fs.utimes(oldOrphan, past, past);
    const unrelated = path.join(stagingDir(), 'notes.txt');
    await fs.writeFile(unrelated, 'not a staging file');
    await fs.utimes(unrelated, past, past);

    expect(await uploads.sweep(now + 1000)).toBe(0);
    await expect(fs.stat(oldOrphan)).rejects.toThrow();
    await fs.stat(newOrphan);
    await fs.stat(unrelated);
    await fs.stat(live!.staging);
    expect(await t.ctx.store.uploads.all()).toHaveLength(1);
    // The offset is still there to resume from.
    const head = await t.request(alice, { method: 'HEAD', url: '/api/tus/live.txt' });
    expect(head.headers['upload-offset']).toBe('3');
  });
});

describe('text content of a resource', () => {
  const get = async (token: string, name: string) =>
    JSON.parse((await t.request(token, { method: 'GET', url: `/api/resources/${name}` })).body) as FileInfo;

  it('comes with a text file of TEXT_CONTENT_LIMIT bytes, and not with one byte more', async () => {
    const { alice } = await start();
    expect(TEXT_CONTENT_LIMIT).toBe(5 * 1024 * 1024);
    await fs.writeFile(path.join(t.root, 'alice', 'at.txt'), Buffer.alloc(TEXT_CONTENT_LIMIT, 0x61));
    await fs.writeFile(path.join(t.root, 'alice', 'over.txt'), Buffer.alloc(TEXT_CONTENT_LIMIT + 1, 0x61));

    const at = await get(alice, 'at.txt');
    expect(at.type).toBe('text');
    expect(at.content).toHaveLength(TEXT_CONTENT_LIMIT);

    const over = await get(alice, 'over.txt');
    expect(over.type).toBe('text');
    expect(over.size).toBe(TEXT_CONTENT_LIMIT + 1);
    expect(over).not.toHaveProperty('content');
  });

  it('reads no more than the size it was given: a file that grew since its stat does not grow the answer', async () => {
    await start();
    const file = path.join(t.root, 'alice', 'growing.txt');
    await fs.writeFile(file, 'é'.repeat(10));
    const alice = (await t.ctx.store.users.getByUsername('alice'))!;
    const opened = await (await fileAccessFor(t.ctx, alice)).open('/growing.txt');
    try {
      const size = Number(opened.stat!.size);
      expect(size).toBe(20);
      await fs.appendFile(file, Buffer.alloc(TEXT_CONTENT_LIMIT, 0x62));
      expect(await readTextBounded(opened.node!, size)).toBe('é'.repeat(10));
      expect(await readTextBounded(opened.node!, 4)).toBe('éé');
    } finally {
      await opened.close();
    }
  });
});
