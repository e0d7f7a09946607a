import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredUser } from '../src/store/users.js';
import { ALL, PASSWORD, renameWindow, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * A body takes long to come; what its caller may do is asked again just before the file takes its
 * place, and a write that may not replace replaces nothing that appeared meanwhile (red-team
 * findings: uploads under way landed after their token was revoked, their user deleted or *create*
 * withdrawn; an upload without override replaced a file created meanwhile).
 *
 * The window is reached without a clock: the app's `beforeReplace` seam runs just before the
 * rename, and the change is made there.
 */
let t: FilesApp;
let carol: string;
const seam = renameWindow();

const file = (...p: string[]) => path.join(t.root, 'shared', ...p);
const names = () => fs.readdir(file());
const basic = (name: string, secret = PASSWORD) =>
  'Basic ' + Buffer.from(`${name}:${secret}`).toString('base64');
const setUser = async (name: string, patch: Partial<StoredUser>) =>
  await t.ctx.store.users.update({ ...(await t.ctx.store.users.getByUsername(name))!, ...patch });
const carolId = async () => (await t.ctx.store.users.getByUsername('carol'))!.id;
async function login(username: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { username, password: PASSWORD },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

beforeEach(async () => {
  t = await startFilesApp({}, seam.build);
  carol = await t.user('carol', { scope: '/shared' });
  await t.user('dave', { scope: '/shared' });
});

afterEach(async () => {
  seam.clear();
  await t?.close();
});

async function tokenOf(session: string): Promise<{ id: string; secret: string }> {
  const res = await t.req(session, {
    method: 'POST',
    url: '/api/tokens',
    payload: { name: 'script', expiresInDays: 0, readOnly: false, current_password: PASSWORD },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json<{ secret: string; id: string }>();
  return { id: body.id, secret: body.secret };
}

describe('a write whose caller lost its rights while the body came', () => {
  it('does not land when the API token is revoked meanwhile (web API and WebDAV)', async () => {
    const token = await tokenOf(carol);
    seam.next(async () => expect(await t.ctx.store.apiTokens.delete(token.id, await carolId())).toBe(true));
    const api = await t.app.inject({
      method: 'POST',
      url: '/api/resources/a.txt',
      headers: { authorization: `Bearer ${token.secret}` },
      payload: 'late',
    });
    expect(api.statusCode, api.body).toBe(401);
    expect(api.body).toContain('revoked');

    const second = await tokenOf(carol);
    seam.next(async () => expect(await t.ctx.store.apiTokens.delete(second.id, await carolId())).toBe(true));
    const dav = await t.app.inject({
      method: 'PUT',
      url: '/dav/b.txt',
      headers: { authorization: basic('carol', second.secret) },
      payload: 'late',
    });
    expect(dav.statusCode, dav.body).toBe(401);
    expect(await names()).toEqual([]);
  });

  it('does not land when create is withdrawn or the user removed meanwhile (session, WebDAV password, tus)', async () => {
    seam.next(() => setUser('carol', { perm: { ...ALL, create: false } }));
    const api = await t.req(carol, { method: 'POST', url: '/api/resources/a.txt', payload: 'late' });
    expect([401, 403], api.body).toContain(api.statusCode);

    await setUser('carol', { perm: ALL });
    carol = await login('carol');
    seam.next(async () => t.ctx.store.users.delete(await carolId()));
    const dav = await t.app.inject({
      method: 'PUT',
      url: '/dav/b.txt',
      headers: { authorization: basic('carol') },
      payload: 'late',
    });
    expect(dav.statusCode, dav.body).toBe(401);

    const dave = await login('dave');
    const made = await t.req(dave, {
      method: 'POST',
      url: '/api/tus/c.txt',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '4' },
    });
    expect(made.statusCode, made.body).toBe(201);
    seam.next(() => setUser('dave', { perm: { ...ALL, create: false } }));
    const last = await t.req(dave, {
      method: 'PATCH',
      url: '/api/tus/c.txt',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      payload: 'late',
    });
    expect([401, 403], last.body).toContain(last.statusCode);
    expect(await names()).toEqual([]);
  });

  it('lands when nothing changed meanwhile', async () => {
    const res = await t.req(carol, { method: 'POST', url: '/api/resources/a.txt', payload: 'on time' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(file('a.txt'), 'utf8')).toBe('on time');
  });
});

describe('a write that may replace, whose caller lost modify while it ran', () => {
  /** Carol's token; the seam withdraws her modify and has dave put a file at `name` meanwhile. */
  async function race(name: string) {
    const token = await tokenOf(carol);
    seam.next(async () => {
      await setUser('carol', { perm: { ...ALL, modify: false } });
      await fs.writeFile(file(name), 'dave’s');
    });
    return { bearer: `Bearer ${token.secret}`, basic: basic('carol', token.secret) };
  }

  it('replaces nothing: POST with override, WebDAV PUT and a resumable upload with override answer 403', async () => {
    let who = await race('a.txt');
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/resources/a.txt?override=true',
      headers: { authorization: who.bearer },
      payload: 'carol’s',
    });
    expect(post.statusCode, post.body).toBe(403);
    expect(await fs.readFile(file('a.txt'), 'utf8')).toBe('dave’s');

    await setUser('carol', { perm: ALL });
    who = await race('b.txt');
    const put = await t.app.inject({
      method: 'PUT',
      url: '/dav/b.txt',
      headers: { authorization: who.basic },
      payload: 'carol’s',
    });
    expect(put.statusCode, put.body).toBe(403);
    expect(await fs.readFile(file('b.txt'), 'utf8')).toBe('dave’s');

    await setUser('carol', { perm: ALL });
    const tusToken = await tokenOf(carol);
    const tusAuth = { authorization: `Bearer ${tusToken.secret}`, 'tus-resumable': '1.0.0' };
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/tus/c.txt?override=true',
      headers: { ...tusAuth, 'upload-length': '7' },
    });
    expect(made.statusCode, made.body).toBe(201);
    seam.next(async () => {
      await setUser('carol', { perm: { ...ALL, modify: false } });
      await fs.writeFile(file('c.txt'), 'dave’s');
    });
    const last = await t.app.inject({
      method: 'PATCH',
      url: '/api/tus/c.txt',
      headers: { ...tusAuth, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      payload: 'carol!!',
    });
    expect(last.statusCode, last.body).toBe(403);
    expect(await fs.readFile(file('c.txt'), 'utf8')).toBe('dave’s');
  });

  it('replaces nothing through a WebDAV COPY with Overwrite: 403', async () => {
    await fs.writeFile(file('src.txt'), 'carol’s');
    await fs.writeFile(file('d.txt'), 'dave’s');
    const token = await tokenOf(carol);
    seam.next(() => setUser('carol', { perm: { ...ALL, modify: false } }));
    const copy = await t.app.inject({
      method: 'COPY',
      url: '/dav/src.txt',
      headers: { authorization: basic('carol', token.secret), destination: '/dav/d.txt', overwrite: 'T' },
    });
    expect(copy.statusCode, copy.body).toBe(403);
    expect(await fs.readFile(file('d.txt'), 'utf8')).toBe('dave’s');
  });
});

describe('a restore whose caller lost its rights while it ran', () => {
  it('does not land once the token is revoked', async () => {
    await fs.writeFile(file('gone.txt'), 'deleted');
    expect((await t.req(carol, { method: 'DELETE', url: '/api/resources/gone.txt' })).statusCode).toBe(204);
    const [item] = (await t.req(carol, { method: 'GET', url: '/api/trash' })).json<Array<{ id: string }>>();
    const token = await tokenOf(carol);
    seam.next(async () => expect(await t.ctx.store.apiTokens.delete(token.id, await carolId())).toBe(true));
    const restore = await t.app.inject({
      method: 'POST',
      url: `/api/trash/${item!.id}/restore`,
      headers: { authorization: `Bearer ${token.secret}` },
    });
    expect(restore.statusCode, restore.body).toBe(401);
    expect(await names()).not.toContain('gone.txt');
    expect((await t.req(carol, { method: 'GET', url: '/api/trash' })).json<unknown[]>()).toHaveLength(1);
  });
});

describe('a copy whose caller lost its rights while it ran', () => {
  /** A folder of two files to copy: the first lands, then the seam revokes. */
  async function twoFiles() {
    await fs.mkdir(file('album'), { recursive: true });
    await fs.writeFile(file('album', '1.txt'), 'one');
    await fs.writeFile(file('album', '2.txt'), 'two');
  }

  it('lands nothing more once its token is revoked, and takes back what it made (web API and WebDAV)', async () => {
    await twoFiles();
    const token = await tokenOf(carol);
    seam.next(async () => expect(await t.ctx.store.apiTokens.delete(token.id, await carolId())).toBe(true));
    const api = await t.app.inject({
      method: 'PATCH',
      url: '/api/resources/album?action=copy&destination=%2Fcopy',
      headers: { authorization: `Bearer ${token.secret}` },
    });
    expect(api.statusCode, api.body).toBe(401);
    expect(api.body).toContain('revoked');
    expect((await names()).sort()).toEqual(['album']);

    const second = await tokenOf(carol);
    seam.next(async () => expect(await t.ctx.store.apiTokens.delete(second.id, await carolId())).toBe(true));
    const dav = await t.app.inject({
      method: 'COPY',
      url: '/dav/album',
      headers: { authorization: basic('carol', second.secret), destination: '/dav/copy' },
    });
    expect(dav.statusCode, dav.body).toBe(401);
    expect((await names()).sort()).toEqual(['album']);
    expect((await fs.readdir(file('album'))).sort()).toEqual(['1.txt', '2.txt']);
  });

  it('lands nothing more once create is withdrawn (session, WebDAV password)', async () => {
    await twoFiles();
    seam.next(async () => await setUser('carol', { perm: { ...ALL, create: false } }));
    const api = await t.req(carol, {
      method: 'PATCH',
      url: '/api/resources/album?action=copy&destination=%2Fcopy',
    });
    expect(api.statusCode, api.body).toBe(403);
    expect((await names()).sort()).toEqual(['album']);

    await setUser('carol', { perm: ALL });
    seam.next(async () => await setUser('carol', { perm: { ...ALL, create: false } }));
    const dav = await t.app.inject({
      method: 'COPY',
      url: '/dav/album',
      headers: { authorization: basic('carol'), destination: '/dav/copy' },
    });
    expect([401, 403]).toContain(dav.statusCode);
    expect((await names()).sort()).toEqual(['album']);
  });
});

describe('a write that may not replace', () => {
  const daveWrites = () => fs.writeFile(file('T.txt'), 'dave’s report');
  // erin may create files, not modify them.
  let erin: string;
  beforeEach(async () => {
    erin = await t.user('erin', { scope: '/shared', perm: { ...ALL, modify: false } });
  });

  it.each([
    ['a POST without override', 'POST', '/api/resources/T.txt'],
    ['a WebDAV PUT of a new name', 'PUT', '/dav/T.txt'],
    ['a POST with override by a user who may not modify', 'POST', '/api/resources/T.txt?override=true'],
  ] as const)('refuses, as %s, a file created meanwhile: 409, that file kept', async (_n, method, url) => {
    seam.next(daveWrites);
    const res = url.startsWith('/dav/')
      ? await t.app.inject({ method, url, headers: { authorization: basic('erin') }, payload: 'erin’s' })
      : await t.req(erin, { method, url, payload: 'erin’s' });
    expect(res.statusCode, res.body).toBe(409);
    expect(await fs.readFile(file('T.txt'), 'utf8')).toBe('dave’s report');
    expect(await names()).toEqual(['T.txt']);
  });

  it('refuses a resumable upload begun with override over a free name, once another user’s file is there (no race)', async () => {
    const made = await t.req(erin, {
      method: 'POST',
      url: '/api/tus/report.csv?override=true',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '4' },
    });
    expect(made.statusCode, made.body).toBe(201);
    await fs.writeFile(file('report.csv'), 'dave’s quarterly report');
    const last = await t.req(erin, {
      method: 'PATCH',
      url: '/api/tus/report.csv',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      payload: 'erin',
    });
    expect(last.statusCode, last.body).toBe(409);
    expect(await fs.readFile(file('report.csv'), 'utf8')).toBe('dave’s quarterly report');
  });

  it('refuses, as a resumable upload by a user who may not modify, a file created meanwhile', async () => {
    const made = await t.req(erin, {
      method: 'POST',
      url: '/api/tus/T.txt?override=true',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '7' },
    });
    expect(made.statusCode, made.body).toBe(201);
    seam.next(daveWrites);
    const last = await t.req(erin, {
      method: 'PATCH',
      url: '/api/tus/T.txt',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      payload: 'erin  s',
    });
    expect(last.statusCode, last.body).toBe(409);
    expect(await fs.readFile(file('T.txt'), 'utf8')).toBe('dave’s report');
  });
});
