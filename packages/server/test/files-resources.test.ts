import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FileInfo, RecursiveEntry } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL, deny, denyRe, startFilesApp, type FilesApp } from './files-helpers.js';

/** The keys of a listing item, in the order the old server sent them. */
const ITEM_KEYS = ['path', 'name', 'size', 'extension', 'modified', 'mode', 'isDir', 'isSymlink', 'type'];

let t: FilesApp;
let bob: string;
let home: string;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'docs/sub'), { recursive: true });
  await fs.writeFile(path.join(home, 'docs/a.txt'), 'hello');
  await fs.writeFile(path.join(home, 'docs/sub/b.md'), '# b');
  await fs.writeFile(path.join(home, 'docs/.hidden'), 'h');
  await fs.writeFile(path.join(home, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]));
  await fs.writeFile(path.join(home, 'blob.bin'), Buffer.from([0, 1, 2, 3, 4]));
  await fs.writeFile(path.join(t.outside, 'secret.txt'), 'SECRET');
});
afterEach(async () => {
  await t.close();
});

const json = <T>(body: string) => JSON.parse(body) as T;

describe('GET /api/resources', () => {
  it('redirects the bare prefix to its folder form', async () => {
    const res = await t.get(bob, '/api/resources?x=1');
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/api/resources/?x=1');
  });

  it('needs a signed-in user', async () => {
    const res = await t.req(undefined, { method: 'GET', url: '/api/resources/' });
    expect(res.statusCode).toBe(401);
  });

  it('lists a folder with every field, sorted, in wire order', async () => {
    const res = await t.get(bob, '/api/resources/docs/');
    expect(res.statusCode).toBe(200);
    const info = json<FileInfo>(res.body);
    expect(Object.keys(info).slice(0, 5)).toEqual(['items', 'numDirs', 'numFiles', 'sorting', 'path']);
    expect(info.path).toBe('/docs');
    expect(info.name).toBe('docs');
    expect(info.isDir).toBe(true);
    expect(info.type).toBe('');
    expect(info.numDirs).toBe(1);
    expect(info.numFiles).toBe(2);
    expect(info.sorting).toEqual({ by: 'name', asc: false });
    expect(info.items!.map((i) => i.name)).toEqual(['sub', '.hidden', 'a.txt']);
    const a = info.items!.find((i) => i.name === 'a.txt')!;
    expect(Object.keys(a)).toEqual(ITEM_KEYS);
    expect(a).toMatchObject({
      path: '/docs/a.txt',
      size: 5,
      extension: '.txt',
      mode: (0o644 & ~0o022) | 0o644,
      type: 'text',
    });
    expect(a.modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    expect(info.items!.find((i) => i.name === 'sub')!.mode).toBe((2 ** 31 + 0o755) >>> 0);
    expect(a).not.toHaveProperty('content');
  });

  it('streams a folder of more than 16,384 entries: same shape, no Content-Length', async () => {
    const big = path.join(home, 'big');
    await fs.mkdir(big);
    const n = 16_400;
    for (let i = 0; i < n; i += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, n - i) }, (_, k) =>
          fs.writeFile(
            path.join(big, `f-${i + k}.${(i + k) % 3 ? 'dat' : 'txt'}`),
            (i + k) % 2 ? 'text' : Buffer.from([0, 1]),
          ),
        ),
      );
    }
    const res = await t.get(bob, '/api/resources/big/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const info = json<FileInfo>(res.body);
    // The text is JSON.stringify's own: no space, keys in wire order, so parsing and writing it
    // again gives the same bytes.
    expect(JSON.stringify(info)).toBe(res.body);
    expect(Object.keys(info).slice(0, 5)).toEqual(['items', 'numDirs', 'numFiles', 'sorting', 'path']);
    expect(info.numFiles).toBe(n);
    expect(info.items).toHaveLength(n);
    expect(info.items![0]!.name).toBe('f-0.txt');
    expect(info.items![n - 1]!.name).toBe(`f-${n - 1}.dat`);
    expect(info.items!.find((i) => i.name === 'f-1.dat')!.type).toBe('text');
    expect(info.items!.find((i) => i.name === 'f-2.dat')!.type).toBe('blob');
    expect(Object.keys(info.items![0]!)).toEqual(ITEM_KEYS);
    // A small folder is still sent whole, with its length.
    const small = await t.get(bob, '/api/resources/docs/');
    expect(small.headers['content-length']).toBe(String(Buffer.byteLength(small.body)));
  });

  it('types files by extension, sniffing and the binary test', async () => {
    const info = json<FileInfo>((await t.get(bob, '/api/resources/')).body);
    const type = (n: string) => info.items!.find((i) => i.name === n)?.type;
    expect(type('photo.jpg')).toBe('image');
    expect(type('blob.bin')).toBe('blob');
  });

  it('sniffs files without a known extension, and stops calling files text past 10 MiB', async () => {
    await fs.writeFile(path.join(home, 'noext'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    await fs.writeFile(path.join(home, 'notes'), 'plain words\n');
    await fs.writeFile(path.join(home, 'huge.txt'), Buffer.alloc(10 * 1024 * 1024 + 1, 0x61));
    await fs.writeFile(path.join(home, 'limit.txt'), Buffer.alloc(10 * 1024 * 1024, 0x61));
    const type = async (name: string) => json<FileInfo>((await t.get(bob, `/api/resources/${name}`)).body);
    expect((await type('noext')).type).toBe('image');
    expect((await type('notes')).type).toBe('text');
    const huge = await type('huge.txt');
    expect(huge.type).toBe('blob');
    expect(huge).not.toHaveProperty('content');
    const limit = await type('limit.txt');
    expect(limit.type).toBe('text');
    // Still text, but past TEXT_CONTENT_LIMIT: no content (security-bounds.test.ts has the edge).
    expect(limit).not.toHaveProperty('content');
  });

  it('types listings by extension only with --disableTypeDetectionByHeader (every small file is text)', async () => {
    const off = await startFilesApp({ disableTypeDetectionByHeader: true });
    try {
      const token = await off.user('bob');
      await fs.writeFile(path.join(off.root, 'bob', 'blob.bin'), Buffer.from([0, 1, 2, 3]));
      const items = json<FileInfo>((await off.get(token, '/api/resources/')).body).items!;
      expect(items.find((i) => i.name === 'blob.bin')!.type).toBe('text');
      // The file itself is still typed with its header.
      expect(json<FileInfo>((await off.get(token, '/api/resources/blob.bin')).body).type).toBe('blob');
    } finally {
      await off.close();
    }
  });

  it('returns a text file with content, textImmutable without modify', async () => {
    const res = await t.get(bob, '/api/resources/docs/a.txt');
    expect(json<FileInfo>(res.body)).toMatchObject({
      type: 'text',
      content: 'hello',
      name: 'a.txt',
      isDir: false,
    });
    const reader = await t.user('reader', { perm: { ...ALL, modify: false }, scope: '/bob' });
    const ro = json<FileInfo>((await t.get(reader, '/api/resources/docs/a.txt')).body);
    expect(ro.type).toBe('textImmutable');
    const noDl = await t.user('nodl', { perm: { ...ALL, download: false, share: false }, scope: '/bob' });
    expect(json<FileInfo>((await t.get(noDl, '/api/resources/docs/a.txt')).body)).not.toHaveProperty(
      'content',
    );
  });

  it('answers 404 for missing paths and 403 for rules and hidden dotfiles', async () => {
    expect((await t.get(bob, '/api/resources/nope')).statusCode).toBe(404);
    const ruled = await t.user('ruled', { scope: '/bob', rules: [deny('/docs/sub')], hideDotfiles: true });
    const denied = await t.get(ruled, '/api/resources/docs/sub/b.md');
    expect(denied.statusCode).toBe(403);
    expect(denied.body).toBe('403 Forbidden\n');
    expect((await t.get(ruled, '/api/resources/docs/.hidden')).statusCode).toBe(403);
    const listing = json<FileInfo>((await t.get(ruled, '/api/resources/docs')).body);
    expect(listing.items!.map((i) => i.name)).toEqual(['a.txt']);
    expect(listing.numDirs).toBe(0);
  });

  it('matches rules on segment boundaries', async () => {
    await fs.mkdir(path.join(home, 'docs_backup'));
    const ruled = await t.user('seg', { scope: '/bob', rules: [deny('/docs')] });
    expect((await t.get(ruled, '/api/resources/docs_backup')).statusCode).toBe(200);
    expect((await t.get(ruled, '/api/resources/docs')).statusCode).toBe(403);
  });

  it('applies global rules before user rules, and regex rules', async () => {
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, rules: [denyRe('\\.md$')] });
    expect((await t.get(bob, '/api/resources/docs/sub/b.md')).statusCode).toBe(403);
  });

  it('refuses symlinks that escape the scope: final, ancestor, dangling; hides them in listings', async () => {
    await fs.symlink(path.join(t.outside, 'secret.txt'), path.join(home, 'final'));
    await fs.symlink(t.outside, path.join(home, 'ancestor'));
    await fs.symlink(path.join(t.outside, 'missing'), path.join(home, 'dangling-out'));
    await fs.symlink('docs/missing', path.join(home, 'dangling-in'));
    await fs.symlink('docs', path.join(home, 'inside'));
    for (const p of ['final', 'ancestor/secret.txt', 'dangling-out', 'ancestor']) {
      const res = await t.get(bob, `/api/resources/${p}`);
      expect(res.statusCode, p).toBe(403);
      expect(res.body).not.toContain('SECRET');
    }
    const root = json<FileInfo>((await t.get(bob, '/api/resources/')).body);
    const names = root.items!.map((i) => i.name);
    expect(names).not.toContain('final');
    expect(names).not.toContain('ancestor');
    expect(names).not.toContain('dangling-out');
    expect(root.items!.find((i) => i.name === 'dangling-in')).toMatchObject({
      type: 'invalid_link',
      isSymlink: true,
    });
    expect(root.items!.find((i) => i.name === 'inside')).toMatchObject({ isDir: true, isSymlink: true });
    const viaLink = json<FileInfo>((await t.get(bob, '/api/resources/inside/a.txt')).body);
    expect(viaLink.content).toBe('hello');
  });

  it('lists named pipes and devices as blob and never opens them', async () => {
    execFileSync('mkfifo', [path.join(home, 'pipe.srt')]);
    // Creating a device needs privileges the test may not have; the pipe is checked regardless.
    const device = spawnSync('mknod', [path.join(home, 'null.txt'), 'c', '1', '3']).status === 0;
    const listing = json<FileInfo>((await t.get(bob, '/api/resources/')).body);
    expect(listing.items!.find((i) => i.name === 'pipe.srt')).toMatchObject({ type: 'blob', isDir: false });
    if (device) expect(listing.items!.find((i) => i.name === 'null.txt')).toMatchObject({ type: 'blob' });
    for (const name of device ? ['pipe.srt', 'null.txt'] : ['pipe.srt']) {
      const info = await t.get(bob, `/api/resources/${name}`);
      expect(json<FileInfo>(info.body)).toMatchObject({ type: 'blob' });
      expect(json<FileInfo>(info.body)).not.toHaveProperty('content');
      expect((await t.get(bob, `/api/resources/${name}?checksum=md5`)).statusCode).toBe(403);
      expect((await t.get(bob, `/api/preview/thumb/${name}`)).statusCode).toBe(501);
      const copy = await t.req(bob, {
        method: 'PATCH',
        url: `/api/resources/${name}?action=copy&destination=%2Fcopy-${name}`,
      });
      expect(copy.statusCode).toBe(403);
    }
    expect((await t.get(bob, '/api/subtitle/pipe.srt')).statusCode).toBe(403);
  });

  it('follows links out of the scope only with --followExternalSymlinks', async () => {
    await fs.symlink(t.outside, path.join(home, 'out'));
    expect((await t.get(bob, '/api/resources/out/secret.txt')).statusCode).toBe(403);
    const relaxed = await startFilesApp({ followExternalSymlinks: true });
    try {
      const token = await relaxed.user('bob');
      await fs.writeFile(path.join(relaxed.outside, 'secret.txt'), 'SECRET');
      await fs.symlink(relaxed.outside, path.join(relaxed.root, 'bob', 'out'));
      const res = await relaxed.get(token, '/api/resources/out/secret.txt');
      expect(res.statusCode).toBe(200);
      expect(json<FileInfo>(res.body).content).toBe('SECRET');
      // Lexical confinement remains: `..` never reaches the disk (the router cleans it away).
      const dots = await relaxed.get(token, '/api/resources/..%2F..%2Fetc%2Fpasswd');
      expect(dots.statusCode).toBe(301);
      expect(dots.headers.location).toBe('/etc/passwd');
    } finally {
      await relaxed.close();
    }
  });

  it('does not let an in-scope link lead around a rule', async () => {
    await fs.symlink('docs/sub', path.join(home, 'shortcut'));
    const ruled = await t.user('around', { scope: '/bob', rules: [deny('/docs/sub')] });
    expect((await t.get(ruled, '/api/resources/shortcut/b.md')).statusCode).toBe(403);
  });

  it('refuses NUL and backslashes with a message', async () => {
    const res = await t.get(bob, '/api/resources/a%5C..%5Cb');
    expect(res.statusCode).toBe(400);
    expect(res.body).toBe('400 Bad Request (the path contains a backslash)\n');
    expect((await t.get(bob, '/api/resources/a%00b')).statusCode).toBe(400);
  });

  it('computes checksums like node:crypto, 400 for an unknown algorithm, 202 without download', async () => {
    const data = crypto.randomBytes(300_000);
    await fs.writeFile(path.join(home, 'data.bin'), data);
    for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
      const info = json<FileInfo>((await t.get(bob, `/api/resources/data.bin?checksum=${algo}`)).body);
      expect(info.checksums).toEqual({ [algo]: crypto.createHash(algo).update(data).digest('hex') });
    }
    const text = json<FileInfo>((await t.get(bob, '/api/resources/docs/a.txt?checksum=md5')).body);
    expect(text).not.toHaveProperty('content');
    const bad = await t.get(bob, '/api/resources/data.bin?checksum=crc');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('unsupported checksum algorithm crc');
    const noDl = await t.user('nodl2', { perm: { ...ALL, download: false, share: false }, scope: '/bob' });
    const accepted = await t.get(noDl, '/api/resources/data.bin?checksum=md5');
    expect(accepted.statusCode).toBe(202);
    expect(accepted.body).toBe('202 Accepted\n');
  });

  it('sends raw bytes for X-Encoding on text files', async () => {
    await fs.writeFile(path.join(home, 'latin.csv'), Buffer.from([0x61, 0xe9, 0x0a]));
    const res = await t.get(bob, '/api/resources/latin.csv', { 'x-encoding': 'true' });
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.rawPayload).toEqual(Buffer.from([0x61, 0xe9, 0x0a]));
    const notText = await t.get(bob, '/api/resources/photo.jpg', { 'x-encoding': 'true' });
    expect(json<FileInfo>(notText.body).type).toBe('image');
  });

  it('discovers subtitles of videos', async () => {
    await fs.writeFile(path.join(home, 'movie.mp4'), '');
    await fs.writeFile(path.join(home, 'movie.en.srt'), '');
    await fs.mkdir(path.join(home, 'Subs'));
    await fs.writeFile(path.join(home, 'Subs/fr.vtt'), '');
    const info = json<FileInfo>((await t.get(bob, '/api/resources/movie.mp4')).body);
    expect(info.type).toBe('video');
    expect(info.subtitles?.sort()).toEqual(['/Subs/fr.vtt', '/movie.en.srt']);
  });

  it('sorts by the user setting with File Browser quirks', async () => {
    await fs.writeFile(path.join(home, 'docs/a10.txt'), '1234567890');
    await fs.writeFile(path.join(home, 'docs/a2.txt'), '12');
    const names = async (token: string) =>
      json<FileInfo>((await t.get(token, '/api/resources/docs')).body).items!.map((i) => i.name);
    expect(await names(bob)).toEqual(['sub', '.hidden', 'a.txt', 'a2.txt', 'a10.txt']);
    const zToA = await t.user('za', { scope: '/bob', sorting: { by: 'name', asc: true } });
    expect(await names(zToA)).toEqual(['sub', 'a10.txt', 'a2.txt', 'a.txt', '.hidden']);
    const bySize = await t.user('sz', { scope: '/bob', sorting: { by: 'size', asc: false } });
    expect(await names(bySize)).toEqual(['a10.txt', 'a.txt', 'a2.txt', '.hidden', 'sub']);
  });
});

describe('POST and PUT /api/resources', () => {
  it('creates folders and files, with ETag, fileMode and dirMode', async () => {
    const dir = await t.req(bob, { method: 'POST', url: '/api/resources/new/deep/' });
    expect(dir.statusCode).toBe(200);
    expect(dir.body).toBe('200 OK\n');
    expect((await fs.stat(path.join(home, 'new/deep'))).mode & 0o777).toBe(0o750);
    const file = await t.req(bob, { method: 'POST', url: '/api/resources/up/x.txt', payload: 'data' });
    expect(file.statusCode).toBe(200);
    expect(file.headers.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(await fs.readFile(path.join(home, 'up/x.txt'), 'utf8')).toBe('data');
    expect((await fs.stat(path.join(home, 'up/x.txt'))).mode & 0o777).toBe(0o640);
    const again = await t.req(bob, { method: 'POST', url: '/api/resources/new/deep/' });
    expect(again.statusCode).toBe(200);
  });

  it('answers 409 on an existing file without override, replaces it with override', async () => {
    const clash = await t.req(bob, { method: 'POST', url: '/api/resources/docs/a.txt', payload: 'x' });
    expect(clash.statusCode).toBe(409);
    expect(clash.body).toBe('409 Conflict\n');
    const ok = await t.req(bob, {
      method: 'POST',
      url: '/api/resources/docs/a.txt?override=true',
      payload: 'new',
    });
    expect(ok.statusCode).toBe(200);
    expect(await fs.readFile(path.join(home, 'docs/a.txt'), 'utf8')).toBe('new');
    const leftovers = (await fs.readdir(path.join(home, 'docs'))).filter((n) => n.includes('.fb-'));
    expect(leftovers).toEqual([]);
  });

  it('never deletes a folder when a file is posted onto it with override (409)', async () => {
    const res = await t.req(bob, { method: 'POST', url: '/api/resources/docs?override=true', payload: 'x' });
    expect(res.statusCode).toBe(409);
    expect(await fs.readFile(path.join(home, 'docs/a.txt'), 'utf8')).toBe('hello');
  });

  it('an interrupted overwrite leaves the original intact and removes its staging file', async () => {
    const original = crypto.randomBytes(100_000);
    await fs.writeFile(path.join(home, 'docs/keep.bin'), original);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const staging = async () => (await fs.readdir(path.join(home, 'docs'))).filter((n) => n.includes('.fb-'));
    const until = async (done: () => Promise<boolean>) => {
      for (let i = 0; i < 500 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
    };
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/resources/docs/keep.bin?override=true',
      headers: { 'x-auth': bob, 'content-type': 'application/octet-stream', 'content-length': '2000000' },
    });
    const closed = new Promise<void>((resolve) => {
      req.on('error', () => resolve());
      req.on('close', () => resolve());
    });
    req.write(crypto.randomBytes(500_000));
    // Cut the connection once the server is writing the staging file.
    await until(async () => (await staging()).length > 0);
    expect(await staging()).toHaveLength(1);
    req.destroy();
    await closed;
    await until(async () => (await staging()).length === 0);
    expect(await staging()).toEqual([]);
    expect((await fs.readFile(path.join(home, 'docs/keep.bin'))).equals(original)).toBe(true);
  });

  it('checks create and modify permissions', async () => {
    const noCreate = await t.user('nocreate', { scope: '/bob', perm: { ...ALL, create: false } });
    expect(
      (await t.req(noCreate, { method: 'POST', url: '/api/resources/n.txt', payload: 'x' })).statusCode,
    ).toBe(403);
    const noModify = await t.user('nomodify', { scope: '/bob', perm: { ...ALL, modify: false } });
    expect(
      (
        await t.req(noModify, {
          method: 'POST',
          url: '/api/resources/docs/a.txt?override=true',
          payload: 'x',
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await t.req(noModify, { method: 'PUT', url: '/api/resources/docs/a.txt', payload: 'x' })).statusCode,
    ).toBe(403);
    expect(await fs.readFile(path.join(home, 'docs/a.txt'), 'utf8')).toBe('hello');
  });

  it('refuses to write through an escaping link', async () => {
    await fs.symlink(t.outside, path.join(home, 'out'));
    const res = await t.req(bob, { method: 'POST', url: '/api/resources/out/evil.txt', payload: 'x' });
    expect(res.statusCode).toBe(403);
    await expect(fs.stat(path.join(t.outside, 'evil.txt'))).rejects.toThrow();
  });

  it('saves with PUT: 404 when missing, 405 on a folder path', async () => {
    const ok = await t.req(bob, { method: 'PUT', url: '/api/resources/docs/a.txt', payload: 'edited' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.etag).toBeDefined();
    expect(await fs.readFile(path.join(home, 'docs/a.txt'), 'utf8')).toBe('edited');
    expect(
      (await t.req(bob, { method: 'PUT', url: '/api/resources/none.txt', payload: 'x' })).statusCode,
    ).toBe(404);
    expect((await t.req(bob, { method: 'PUT', url: '/api/resources/docs/', payload: 'x' })).statusCode).toBe(
      405,
    );
  });

  it('streams large bodies to disk', async () => {
    const data = crypto.randomBytes(5 * 1024 * 1024);
    const res = await t.req(bob, {
      method: 'POST',
      url: '/api/resources/big.bin',
      payload: data,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(res.statusCode).toBe(200);
    expect((await fs.readFile(path.join(home, 'big.bin'))).equals(data)).toBe(true);
  });
});

describe('DELETE /api/resources', () => {
  it('deletes trees, 404 when missing, 403 for the root or without permission', async () => {
    const res = await t.req(bob, { method: 'DELETE', url: '/api/resources/docs' });
    expect(res.statusCode).toBe(204);
    await expect(fs.stat(path.join(home, 'docs'))).rejects.toThrow();
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/docs' })).statusCode).toBe(404);
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/' })).statusCode).toBe(403);
    const noDelete = await t.user('nodel', { scope: '/bob', perm: { ...ALL, delete: false } });
    expect((await t.req(noDelete, { method: 'DELETE', url: '/api/resources/photo.jpg' })).statusCode).toBe(
      403,
    );
  });

  it('refuses when a descendant is denied by a rule', async () => {
    const ruled = await t.user('desc', { scope: '/bob', rules: [deny('/docs/sub')] });
    expect((await t.req(ruled, { method: 'DELETE', url: '/api/resources/docs' })).statusCode).toBe(403);
    expect(await fs.readFile(path.join(home, 'docs/sub/b.md'), 'utf8')).toBe('# b');
  });

  it('removes an escaping link itself, never its target', async () => {
    await fs.symlink(t.outside, path.join(home, 'out'));
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/out' })).statusCode).toBe(204);
    expect(await fs.readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('SECRET');
    await expect(fs.lstat(path.join(home, 'out'))).rejects.toThrow();
  });
});

describe('PATCH /api/resources', () => {
  const patch = (token: string, src: string, query: string) =>
    t.req(token, { method: 'PATCH', url: `/api/resources${src}?${query}` });

  it('copies files and folders, 409 on conflicts, auto-names with rename=true', async () => {
    expect((await patch(bob, '/docs/a.txt', 'action=copy&destination=%2Fa.txt')).statusCode).toBe(200);
    expect(await fs.readFile(path.join(home, 'a.txt'), 'utf8')).toBe('hello');
    expect((await patch(bob, '/docs/a.txt', 'action=copy&destination=%2Fa.txt')).statusCode).toBe(409);
    expect((await patch(bob, '/docs/a.txt', 'action=copy&destination=%2Fa.txt&rename=true')).statusCode).toBe(
      200,
    );
    expect((await patch(bob, '/docs/a.txt', 'action=copy&destination=%2Fa.txt&rename=true')).statusCode).toBe(
      200,
    );
    expect(await fs.readFile(path.join(home, 'a(1).txt'), 'utf8')).toBe('hello');
    expect(await fs.readFile(path.join(home, 'a(2).txt'), 'utf8')).toBe('hello');
    expect((await patch(bob, '/docs', 'action=copy&destination=%2Fcopy')).statusCode).toBe(200);
    expect(await fs.readFile(path.join(home, 'copy/sub/b.md'), 'utf8')).toBe('# b');
  });

  it('moves and renames, with override replacing a file', async () => {
    expect((await patch(bob, '/docs/a.txt', 'action=rename&destination=%2Fmoved.txt')).statusCode).toBe(200);
    await expect(fs.stat(path.join(home, 'docs/a.txt'))).rejects.toThrow();
    await fs.writeFile(path.join(home, 'other.txt'), 'other');
    expect((await patch(bob, '/other.txt', 'action=rename&destination=%2Fmoved.txt')).statusCode).toBe(409);
    expect(
      (await patch(bob, '/other.txt', 'action=rename&destination=%2Fmoved.txt&override=true')).statusCode,
    ).toBe(200);
    expect(await fs.readFile(path.join(home, 'moved.txt'), 'utf8')).toBe('other');
  });

  it('answers 400 when the destination is inside the source, and for unknown actions', async () => {
    const parent = await patch(bob, '/docs', 'action=copy&destination=%2Fdocs%2Fsub%2Fx');
    expect(parent.statusCode).toBe(400);
    expect(parent.body).toBe('400 Bad Request (source is parent)\n');
    const unknown = await patch(bob, '/docs/a.txt', 'action=zap&destination=%2Fz.txt');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toBe('400 Bad Request (unsupported action zap: invalid request params)\n');
  });

  it('checks permissions: root, create, rename, modify for override, rules on descendants', async () => {
    expect((await patch(bob, '/docs', 'action=rename')).statusCode).toBe(403);
    const noCreate = await t.user('nc', { scope: '/bob', perm: { ...ALL, create: false } });
    expect((await patch(noCreate, '/docs/a.txt', 'action=copy&destination=%2Fc.txt')).statusCode).toBe(403);
    const noRename = await t.user('nr', { scope: '/bob', perm: { ...ALL, rename: false } });
    expect((await patch(noRename, '/docs/a.txt', 'action=rename&destination=%2Fc.txt')).statusCode).toBe(403);
    const noModify = await t.user('nm', { scope: '/bob', perm: { ...ALL, modify: false } });
    await fs.writeFile(path.join(home, 'c.txt'), 'c');
    expect(
      (await patch(noModify, '/docs/a.txt', 'action=copy&destination=%2Fc.txt&override=true')).statusCode,
    ).toBe(403);
    const ruled = await t.user('rd', { scope: '/bob', rules: [deny('/docs/sub')] });
    expect((await patch(ruled, '/docs', 'action=copy&destination=%2Fd2')).statusCode).toBe(403);
    const mirror = await t.user('rm', { scope: '/bob', rules: [deny('/d3/sub')] });
    expect((await patch(mirror, '/docs', 'action=rename&destination=%2Fd3')).statusCode).toBe(403);
  });

  it('never copies through an escaping link', async () => {
    await fs.symlink(t.outside, path.join(home, 'docs/out'));
    expect((await patch(bob, '/docs', 'action=copy&destination=%2Fcopy')).statusCode).toBe(200);
    await expect(fs.stat(path.join(home, 'copy/out'))).rejects.toThrow();
    expect((await patch(bob, '/docs/out/secret.txt', 'action=copy&destination=%2Fs.txt')).statusCode).toBe(
      403,
    );
  });
});

describe('GET /api/resources/recursive and /api/usage', () => {
  it('lists a tree without the root, pruning denied folders', async () => {
    const ruled = await t.user('rec', { scope: '/bob', rules: [deny('/docs/sub')] });
    const res = await t.get(ruled, '/api/resources/recursive/docs');
    expect(res.statusCode).toBe(200);
    const entries = json<RecursiveEntry[]>(res.body);
    expect(entries.map((e) => e.path).sort()).toEqual(['/docs/.hidden', '/docs/a.txt']);
    expect(Object.keys(entries[0]!)).toEqual(['path', 'name', 'size', 'modified', 'isDir']);
    const file = await t.get(bob, '/api/resources/recursive/docs/a.txt');
    expect(file.statusCode).toBe(400);
    expect(file.body).toBe('400 Bad Request (path is not a directory)\n');
    expect((await t.get(bob, '/api/resources/recursive/none')).statusCode).toBe(404);
  });

  it('lists a tree thousands of folders deep to its bottom', async () => {
    const settings = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...settings, trash: { ...settings.trash, enabled: false } });
    const deep = '/deep/' + 'c/'.repeat(3000) + 'f.bin';
    const put = await t.req(bob, { method: 'POST', url: `/api/resources${deep}`, payload: 'bottom' });
    expect(put.statusCode, put.body).toBe(200);
    const res = await t.get(bob, '/api/resources/recursive/deep');
    expect(res.statusCode).toBe(200);
    const entries = json<RecursiveEntry[]>(res.body);
    expect(entries).toHaveLength(3001);
    expect(entries.at(-1)).toMatchObject({ path: deep, size: 6, isDir: false });
    // Removed (not into the trash) as deep as it was made: the temporary folder's removal cannot name paths that long.
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/deep' })).statusCode).toBe(204);
  }, 180_000);

  it('reports disk usage for folders and zeros for files', async () => {
    const dir = json<{ total: number; used: number }>((await t.get(bob, '/api/usage/')).body);
    expect(dir.total).toBeGreaterThan(0);
    expect(dir.used).toBeGreaterThan(0);
    expect(json((await t.get(bob, '/api/usage/docs/a.txt')).body)).toEqual({ total: 0, used: 0 });
    expect((await t.get(bob, '/api/usage/none')).statusCode).toBe(404);
    expect((await t.get(bob, '/api/usage')).statusCode).toBe(301);
  });
});
