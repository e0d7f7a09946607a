import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import * as tus from 'tus-js-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serverPaths } from '../src/files/access/private.js';
import { ResumableUploads } from '../src/uploads/resumable.js';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
let token: string;
beforeEach(async () => {
  t = await startTestApp();
  await t.createUser({ username: 'bob', scope: '/bob' });
  await fs.mkdir(path.join(t.root, 'bob'), { recursive: true });
  token = await t.login('bob');
});
afterEach(async () => {
  await t.close();
});

const OCTETS = 'application/offset+octet-stream';
const post = (p: string, length: string | undefined, extra: Record<string, string> = {}, who = token) =>
  t.request(who, {
    method: 'POST',
    url: `/api/tus${p}`,
    headers: { 'tus-resumable': '1.0.0', ...(length !== undefined && { 'upload-length': length }), ...extra },
  });
const patch = (p: string, offset: string, body: Buffer | string, type = OCTETS, who = token) =>
  t.request(who, {
    method: 'PATCH',
    url: `/api/tus${p}`,
    headers: { 'content-type': type, 'upload-offset': offset, 'tus-resumable': '1.0.0' },
    payload: body,
  });
const head = (p: string, who = token) => t.request(who, { method: 'HEAD', url: `/api/tus${p}` });

describe('tus protocol', () => {
  it('uploads 1 MiB with tus-js-client in chunks', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const data = crypto.randomBytes(1024 * 1024);
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(data, {
        endpoint: `http://127.0.0.1:${port}/api/tus/photos/big.bin?override=false`,
        chunkSize: 256 * 1024,
        retryDelays: [],
        headers: { 'X-Auth': token },
        metadata: { filename: 'big.bin' },
        onError: reject,
        onSuccess: () => resolve(),
      });
      upload.start();
    });
    const written = await fs.readFile(path.join(t.root, 'bob', 'photos', 'big.bin'));
    expect(written.equals(data)).toBe(true);
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });

  it('answers the handshake and File Browser statuses', async () => {
    const options = await t.app.inject({ method: 'OPTIONS', url: '/api/tus/x' });
    expect(options.statusCode).toBe(204);
    expect(options.headers['tus-version']).toBe('1.0.0');
    const created = await post('/a.txt', '5');
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe('/api/tus/a.txt');
    expect(created.headers['tus-resumable']).toBe('1.0.0');
    expect((await head('/a.txt')).headers).toMatchObject({
      'upload-offset': '0',
      'upload-length': '5',
      'cache-control': 'no-store',
    });
    const first = await patch('/a.txt', '0', 'he');
    expect(first.statusCode).toBe(204);
    expect(first.headers['upload-offset']).toBe('2');
    // Nothing is visible until the last byte arrives.
    await expect(fs.stat(path.join(t.root, 'bob', 'a.txt'))).rejects.toThrow();
    expect((await patch('/a.txt', '2', 'llo')).headers['upload-offset']).toBe('5');
    expect(await fs.readFile(path.join(t.root, 'bob', 'a.txt'), 'utf8')).toBe('hello');
    expect((await head('/a.txt')).statusCode).toBe(404);
  });

  it('refuses bad requests with clear errors', async () => {
    await fs.mkdir(path.join(t.root, 'bob', 'dir'));
    await fs.writeFile(path.join(t.root, 'bob', 'old.txt'), 'old');
    expect((await post('/n.txt', undefined)).statusCode).toBe(400);
    expect((await post('/n.txt', 'abc')).body).toContain('Upload-Length must be a whole number');
    expect((await post('/dir', '3')).statusCode).toBe(400);
    const exists = await post('/old.txt', '3');
    expect(exists.statusCode).toBe(409);
    expect((await post('/', '3')).statusCode).toBe(403);
    await post('/n.txt', '4');
    expect((await patch('/n.txt', '0', 'ab', 'text/plain')).statusCode).toBe(415);
    expect((await patch('/n.txt', 'x', 'ab')).statusCode).toBe(400);
    expect((await patch('/n.txt', '2', 'ab')).statusCode).toBe(409);
    expect((await patch('/n.txt', '9', 'ab')).statusCode).toBe(400);
    const tooMuch = await patch('/n.txt', '0', 'abcdef');
    expect(tooMuch.statusCode).toBe(413);
    expect((await head('/n.txt')).headers['upload-offset']).toBe('0');
    expect((await patch('/other.txt', '0', 'ab')).statusCode).toBe(404);
    expect(await fs.readFile(path.join(t.root, 'bob', 'old.txt'), 'utf8')).toBe('old');
  });

  it('keeps an overwritten file intact until the upload completes, and after a cancel', async () => {
    const target = path.join(t.root, 'bob', 'report.txt');
    await fs.writeFile(target, 'original');
    expect((await post('/report.txt', '10', {}, token)).statusCode).toBe(409);
    const created = await t.request(token, {
      method: 'POST',
      url: '/api/tus/report.txt?override=true',
      headers: { 'upload-length': '10' },
    });
    expect(created.statusCode).toBe(201);
    await patch('/report.txt', '0', 'REPLA');
    expect(await fs.readFile(target, 'utf8')).toBe('original');
    const cancel = await t.request(token, { method: 'DELETE', url: '/api/tus/report.txt' });
    expect(cancel.statusCode).toBe(204);
    expect(await fs.readFile(target, 'utf8')).toBe('original');
    expect(await fs.readdir(serverPaths(t.ctx.config).uploadsDir)).toEqual([]);

    await t.request(token, {
      method: 'POST',
      url: '/api/tus/report.txt?override=true',
      headers: { 'upload-length': '10' },
    });
    await patch('/report.txt', '0', 'REPLA');
    await patch('/report.txt', '5', 'CED!!');
    expect(await fs.readFile(target, 'utf8')).toBe('REPLACED!!');
  });

  it('an interrupted overwrite leaves the original intact, and the upload resumes from its offset', async () => {
    const target = path.join(t.root, 'bob', 'photo.bin');
    const original = crypto.randomBytes(200_000);
    await fs.writeFile(target, original);
    const data = crypto.randomBytes(1024 * 1024);
    const created = await t.request(token, {
      method: 'POST',
      url: '/api/tus/photo.bin?override=true',
      headers: { 'upload-length': String(data.length), 'tus-resumable': '1.0.0' },
    });
    expect(created.statusCode).toBe(201);

    // A PATCH announcing the whole file, cut by the client after 300 kB.
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'PATCH',
        path: '/api/tus/photo.bin',
        headers: {
          'x-auth': token,
          'content-type': OCTETS,
          'upload-offset': '0',
          'tus-resumable': '1.0.0',
          'content-length': String(data.length),
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(data.subarray(0, 300_000), () => req.destroy());
    });
    expect((await fs.readFile(target)).equals(original)).toBe(true);

    // Resume as a tus client does: ask for the offset, send the rest; 409 means ask again.
    for (let attempt = 0; ; attempt++) {
      const status = await head('/photo.bin');
      expect(status.statusCode).toBe(200);
      const offset = Number(status.headers['upload-offset']);
      expect(offset).toBeLessThanOrEqual(300_000);
      expect((await fs.readFile(target)).equals(original)).toBe(true);
      const res = await patch('/photo.bin', String(offset), data.subarray(offset));
      if (res.statusCode === 204) break;
      expect(res.statusCode).toBe(409);
      expect(attempt).toBeLessThan(5);
    }
    expect((await fs.readFile(target)).equals(data)).toBe(true);
    expect(await fs.readdir(path.join(t.root, 'bob'))).toEqual(['photo.bin']);
  });

  it('runs PATCHes to one upload one after the other: one wins, the other gets 409', async () => {
    expect((await post('/race.bin', '12')).statusCode).toBe(201);
    const [a, b] = await Promise.all([patch('/race.bin', '0', 'AAAAAA'), patch('/race.bin', '0', 'BBBBBB')]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([204, 409]);
    const winner = a.statusCode === 204 ? 'AAAAAA' : 'BBBBBB';
    expect((await head('/race.bin')).headers['upload-offset']).toBe('6');
    expect((await patch('/race.bin', '6', 'CCCCCC')).statusCode).toBe(204);
    expect(await fs.readFile(path.join(t.root, 'bob', 'race.bin'), 'utf8')).toBe(winner + 'CCCCCC');
  });

  it('checks Upload-Length before creating anything', async () => {
    expect((await post('/newdir/x.txt', '-1')).statusCode).toBe(400);
    expect((await post('/newdir/x.txt', '1.5')).statusCode).toBe(400);
    await expect(fs.stat(path.join(t.root, 'bob', 'newdir'))).rejects.toThrow();
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });

  it('abandons stale uploads by removing only their staging files', async () => {
    const target = path.join(t.root, 'bob', 'kept.txt');
    await fs.writeFile(target, 'original');
    const created = await t.request(token, {
      method: 'POST',
      url: '/api/tus/kept.txt?override=true',
      headers: { 'upload-length': '8' },
    });
    expect(created.statusCode).toBe(201);
    await patch('/kept.txt', '0', 'half');
    const [upload] = await t.ctx.store.uploads.all();
    expect(await new ResumableUploads(t.ctx).sweep(Date.now())).toBe(0);
    expect(
      await new ResumableUploads(t.ctx).sweep(Date.now() + t.ctx.config.uploadsExpiry * 1000 + 1000),
    ).toBe(1);
    await expect(fs.stat(upload!.staging)).rejects.toThrow();
    expect(await t.ctx.store.uploads.all()).toEqual([]);
    expect(await fs.readFile(target, 'utf8')).toBe('original');
    expect((await head('/kept.txt')).statusCode).toBe(404);
  });

  it('completes zero-byte uploads at creation', async () => {
    expect((await post('/empty.txt', '0')).statusCode).toBe(201);
    expect((await fs.stat(path.join(t.root, 'bob', 'empty.txt'))).size).toBe(0);
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });

  it('keeps uploads private to their owner', async () => {
    await t.createUser({ username: 'eve', scope: '/bob' });
    const eve = await t.login('eve');
    await post('/secret.txt', '4');
    expect((await head('/secret.txt', eve)).statusCode).toBe(404);
    expect((await patch('/secret.txt', '0', 'evil', OCTETS, eve)).statusCode).toBe(404);
    expect((await t.request(eve, { method: 'DELETE', url: '/api/tus/secret.txt' })).statusCode).toBe(404);
    expect((await head('/secret.txt')).statusCode).toBe(200);
  });

  it('needs create, modify to overwrite, and obeys rules and the scope', async () => {
    const noCreate = await t.createUser({
      username: 'reader',
      scope: '/bob',
      perm: {
        admin: false,
        execute: false,
        create: false,
        rename: true,
        modify: true,
        delete: true,
        share: true,
        download: true,
      },
    });
    const reader = await t.login(noCreate.username);
    expect((await post('/r.txt', '1', {}, reader)).statusCode).toBe(403);
    await fs.writeFile(path.join(t.root, 'bob', 'keep.txt'), 'keep');
    await t.createUser({
      username: 'nomod',
      scope: '/bob',
      perm: {
        admin: false,
        execute: false,
        create: true,
        rename: true,
        modify: false,
        delete: true,
        share: true,
        download: true,
      },
    });
    const nomod = await t.login('nomod');
    const res = await t.request(nomod, {
      method: 'POST',
      url: '/api/tus/keep.txt?override=true',
      headers: { 'upload-length': '1' },
    });
    expect(res.statusCode).toBe(403);
    await t.createUser({
      username: 'ruled',
      scope: '/bob',
      rules: [{ regex: false, allow: false, path: '/private', regexp: null }],
    });
    const ruled = await t.login('ruled');
    expect((await post('/private/x.txt', '1', {}, ruled)).statusCode).toBe(403);
    expect((await post('/private_ok/x.txt', '1', {}, ruled)).statusCode).toBe(201);
    await fs.symlink(t.outside, path.join(t.root, 'bob', 'escape'));
    expect((await post('/escape/x.txt', '1')).statusCode).toBe(403);
    expect(await fs.readdir(t.outside)).toEqual([]);
    // A final link out of the scope, existing or dangling, is never written through.
    await fs.writeFile(path.join(t.outside, 'target.txt'), 'outside');
    await fs.symlink(path.join(t.outside, 'target.txt'), path.join(t.root, 'bob', 'link.txt'));
    await fs.symlink(path.join(t.outside, 'missing.txt'), path.join(t.root, 'bob', 'dangling.txt'));
    const overLink = await t.request(token, {
      method: 'POST',
      url: '/api/tus/link.txt?override=true',
      headers: { 'upload-length': '1' },
    });
    expect(overLink.statusCode).toBe(403);
    expect((await post('/dangling.txt', '0')).statusCode).toBe(403);
    expect((await fs.readdir(t.outside)).sort()).toEqual(['target.txt']);
    expect(await fs.readFile(path.join(t.outside, 'target.txt'), 'utf8')).toBe('outside');
    expect(
      (
        await t.request(undefined, {
          method: 'POST',
          url: '/api/tus/x.txt',
          headers: { 'upload-length': '1' },
        })
      ).statusCode,
    ).toBe(401);
  });
});

describe('an account deleted with uploads pending', () => {
  it('leaves nothing of them held against the quota of the folder it had', async () => {
    const fred = await t.createUser({ username: 'fred', scope: '/fred', quota: 10_000 });
    await fs.mkdir(path.join(t.root, 'fred'), { recursive: true });
    const asFred = await t.login('fred');
    for (const name of ['a', 'b', 'c'])
      expect((await post(`/${name}.bin`, '3000', {}, asFred)).statusCode).toBe(201);
    const deleted = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${fred.id}`,
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    // The next owner of the folder has all of its room.
    await t.createUser({ username: 'fred2', scope: '/fred', quota: 10_000 });
    const asFred2 = await t.login('fred2');
    const put = await t.request(asFred2, {
      method: 'POST',
      url: '/api/resources/fits.bin',
      payload: 'x'.repeat(8_000),
    });
    expect(put.statusCode, put.body).toBe(200);
  });
});
