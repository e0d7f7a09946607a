import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import * as tus from 'tus-js-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../src/http/body-parsers.js';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';
import { OldClient } from './old-client.js';

/**
 * Every call File Browser 2.63.23's web client makes, sent over real HTTP the way it sends it
 * (see old-client.ts), against the real app: each must succeed and leave its effect on disk or
 * in the database. The headers the server received are recorded, so each test also shows that
 * the request was labelled as a browser labels it.
 */

const TEXT = 'text/plain;charset=UTF-8';
const NEW_PASSWORD = 'Vq7#tLm2!pZr9wXe-old-client';
const OTHER_PASSWORD = 'Hb4$kNs8@yQc1uJd-old-client';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

let t: TestApp;
let origin: string;
let seen: Seen[];
let admin: OldClient;

beforeEach(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  seen = [];
  t.app.server.prependListener('request', (req) =>
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers }),
  );
  admin = new OldClient(origin);
  await expectStatus(admin.login('admin', ADMIN_PASSWORD), 200);
});
afterEach(async () => {
  await t.close();
});

/** Fails with the answer's body, which says why, when the status is not the expected one. */
async function expectStatus(pending: Promise<Response> | Response, status: number): Promise<Response> {
  const res = await pending;
  if (res.status !== status) {
    throw new Error(`${res.url} answered ${res.status}, not ${status}: ${await res.text()}`);
  }
  return res;
}

/** The headers of the last request the server received for this method and path. */
function lastSeen(method: string, url: string): IncomingHttpHeaders {
  const hit = seen.filter((s) => s.method === method && s.url.split('?')[0] === url).at(-1);
  if (!hit) throw new Error(`the server received no ${method} ${url}`);
  return hit.headers;
}

const onDisk = (rel: string) => path.join(t.root, rel);
const readDisk = (rel: string) => fs.readFile(onDisk(rel), 'utf8');
const exists = (rel: string) =>
  fs.lstat(onDisk(rel)).then(
    () => true,
    () => false,
  );

describe('the old web client, call by call', () => {
  it('signs in, renews its token and signs up', async () => {
    expect(admin.jwt.split('.')).toHaveLength(3);
    expect(lastSeen('POST', '/api/login')['content-type']).toBe('application/json');

    const before = admin.jwt;
    await expectStatus(admin.renew(), 200);
    expect(admin.jwt.split('.')).toHaveLength(3);
    expect(admin.jwt).not.toBe(before);
    expect(lastSeen('POST', '/api/renew')['content-type']).toBeUndefined();

    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), signup: true });
    const visitor = new OldClient(origin);
    await expectStatus(visitor.signup('carol', NEW_PASSWORD), 200);
    expect(await t.ctx.store.users.getByUsername('carol')).toBeDefined();
    await expectStatus(visitor.login('carol', NEW_PASSWORD), 200);
    await expectStatus(new OldClient(origin).login('carol', 'not her password'), 403);
  });

  it('lists, reads, creates, updates in every way the screens do, and deletes users', async () => {
    const list = (await (await expectStatus(admin.users.getAll(), 200)).json()) as { username: string }[];
    expect(list.map((u) => u.username)).toEqual(['admin']);
    await expectStatus(admin.users.get(1), 200);

    // The new-user form starts from the global defaults (views/settings/User.vue).
    const { defaults } = (await (await expectStatus(admin.settings.get(), 200)).json()) as {
      defaults: Record<string, unknown>;
    };
    const form = {
      ...defaults,
      username: 'dave',
      password: NEW_PASSWORD,
      rules: [],
      lockPassword: false,
      id: 0,
    };
    const created = await expectStatus(admin.users.create(form, ADMIN_PASSWORD), 201);
    expect(lastSeen('POST', '/api/users')['content-type']).toBe(TEXT);
    const dave = (await t.ctx.store.users.getByUsername('dave'))!;
    expect(created.headers.get('location')).toBe(`/settings/users/${dave.id}`);

    // The user form saves the whole record.
    const record = (await (await expectStatus(admin.users.get(dave.id), 200)).json()) as {
      id: number;
      locale: string;
      perm: Record<string, boolean>;
    };
    record.locale = 'fr';
    record.perm = { ...record.perm, delete: false };
    await expectStatus(admin.users.update(record, ['all'], ADMIN_PASSWORD), 200);
    expect(lastSeen('PUT', `/api/users/${dave.id}`)['content-type']).toBe(TEXT);
    expect(await t.ctx.store.users.get(dave.id)).toMatchObject({ locale: 'fr', perm: { delete: false } });

    const client = new OldClient(origin);
    await expectStatus(client.login('dave', NEW_PASSWORD), 200);
    const id = client.tokenUser().id;
    expect(id).toBe(dave.id);

    // The listing's view switch and column sorting (views/files/FileListing.vue).
    await expectStatus(client.users.update({ id, viewMode: 'mosaic gallery' }, ['viewMode']), 200);
    expect((await t.ctx.store.users.get(id))!.viewMode).toBe('mosaic gallery');
    await expectStatus(client.users.update({ id, sorting: { by: 'size', asc: true } }, ['sorting']), 200);
    expect((await t.ctx.store.users.get(id))!.sorting).toEqual({ by: 'size', asc: true });

    // The profile's settings form sends the token's user with its changes (views/settings/Profile.vue).
    const profile = {
      ...client.tokenUser(),
      id,
      locale: 'de',
      hideDotfiles: true,
      singleClick: true,
      redirectAfterCopyMove: false,
      dateFormat: true,
      aceEditorTheme: 'monokai',
    };
    await expectStatus(
      client.users.update(profile, [
        'locale',
        'hideDotfiles',
        'singleClick',
        'redirectAfterCopyMove',
        'dateFormat',
        'aceEditorTheme',
      ]),
      200,
    );
    expect(await t.ctx.store.users.get(id)).toMatchObject({
      locale: 'de',
      hideDotfiles: true,
      singleClick: true,
      redirectAfterCopyMove: false,
      dateFormat: true,
      aceEditorTheme: 'monokai',
    });

    // The profile's password form.
    await expectStatus(
      client.users.update(
        { ...client.tokenUser(), id, password: OTHER_PASSWORD },
        ['password'],
        NEW_PASSWORD,
      ),
      200,
    );
    await expectStatus(new OldClient(origin).login('dave', OTHER_PASSWORD), 200);
    await expectStatus(new OldClient(origin).login('dave', NEW_PASSWORD), 403);

    await expectStatus(admin.users.remove(id, ADMIN_PASSWORD), 200);
    expect(lastSeen('DELETE', `/api/users/${id}`)['content-type']).toBe(TEXT);
    expect(await t.ctx.store.users.get(id)).toBeUndefined();
  });

  it('reads and saves the global settings', async () => {
    const settings = (await (await expectStatus(admin.settings.get(), 200)).json()) as {
      branding: object;
      tus: object;
    };
    // views/settings/Global.vue sends what it read, shell split into words, commands rebuilt.
    const changed = {
      ...settings,
      signup: true,
      branding: { ...settings.branding, name: 'Old client' },
      tus: { ...settings.tus, chunkSize: 5 * 1024 * 1024 },
      shell: ['bash', '-c'],
      commands: {},
    };
    await expectStatus(admin.settings.update(changed), 200);
    expect(lastSeen('PUT', '/api/settings')['content-type']).toBe(TEXT);
    expect(t.ctx.store.settings.get()).toMatchObject({
      signup: true,
      branding: { name: 'Old client' },
      tus: { chunkSize: 5 * 1024 * 1024 },
      shell: ['bash', '-c'],
    });
  });

  it('creates, lists, finds and deletes shares, and visitors open them', async () => {
    await fs.mkdir(onDisk('docs'));
    await fs.writeFile(onDisk('docs/a.txt'), 'alpha');
    await fs.writeFile(onDisk('report.txt'), 'quarterly');
    const share = async (pending: Promise<Response>) =>
      (await (await expectStatus(pending, 200)).json()) as { hash: string; path: string };

    const folder = await share(admin.share.create('/files/docs/'));
    expect(lastSeen('POST', '/api/share/docs/')['content-type']).toBe(TEXT);
    expect(await t.ctx.store.shares.get(folder.hash)).toMatchObject({
      path: '/docs/',
      expire: 0,
      passwordHash: '',
    });

    const guarded = await share(admin.share.create('/files/report.txt', 'secret'));
    expect((await t.ctx.store.shares.get(guarded.hash))!.passwordHash).not.toBe('');

    const now = Math.floor(Date.now() / 1000);
    const expiring = await share(admin.share.create('/files/docs/a.txt', '', '2', 'days'));
    const { expire } = (await t.ctx.store.shares.get(expiring.hash))!;
    expect(expire).toBeGreaterThanOrEqual(now + 2 * 86400 - 5);
    expect(expire).toBeLessThanOrEqual(now + 2 * 86400 + 60);
    const both = await share(admin.share.create('/files/report.txt', 'other', '30', 'minutes'));
    expect((await t.ctx.store.shares.get(both.hash))!.passwordHash).not.toBe('');
    expect((await t.ctx.store.shares.get(both.hash))!.expire).toBeGreaterThan(now);

    const listed = (await (await expectStatus(admin.share.list(), 200)).json()) as { hash: string }[];
    expect(listed.map((s) => s.hash).sort()).toEqual(
      [folder.hash, guarded.hash, expiring.hash, both.hash].sort(),
    );
    const ofFolder = (await (await expectStatus(admin.share.get('/files/docs/'), 200)).json()) as {
      hash: string;
    }[];
    expect(ofFolder.map((s) => s.hash)).toEqual([folder.hash]);

    // The visitor's page (views/Share.vue) and its download links.
    const visitor = new OldClient(origin);
    const listing = (await (await expectStatus(visitor.pub.fetch(`/share/${folder.hash}`), 200)).json()) as {
      items: { name: string; path: string }[];
    };
    expect(listing.items.map((i) => i.name)).toEqual(['a.txt']);
    const file = await expectStatus(
      visitor.open(`/api/public/dl/${folder.hash}${listing.items[0]!.path}`),
      200,
    );
    expect(await file.text()).toBe('alpha');

    await expectStatus(visitor.pub.fetch(`/share/${guarded.hash}`, 'wrong'), 401);
    const opened = (await (
      await expectStatus(visitor.pub.fetch(`/share/${guarded.hash}`, 'secret'), 200)
    ).json()) as {
      token: string;
    };
    const download = await expectStatus(
      visitor.open(`/api/public/dl/${guarded.hash}?token=${opened.token}`),
      200,
    );
    expect(await download.text()).toBe('quarterly');

    await expectStatus(admin.share.remove(folder.hash), 200);
    expect(lastSeen('DELETE', `/api/share/${folder.hash}`)['content-type']).toBeUndefined();
    expect(await t.ctx.store.shares.get(folder.hash)).toBeUndefined();
  });

  it('lists, creates, uploads, saves, copies, moves, renames and deletes files', async () => {
    await expectStatus(admin.files.fetch('/files/'), 200);

    // New folder and new file prompts: an XHR POST of "".
    await expectStatus(admin.files.post('/files/projects/'), 200);
    expect(lastSeen('POST', '/api/resources/projects/')).toMatchObject({
      'content-type': TEXT,
      'content-length': '0',
    });
    expect((await fs.stat(onDisk('projects'))).isDirectory()).toBe(true);
    await expectStatus(admin.files.post('/files/projects/notes.md'), 200);
    expect(await readDisk('projects/notes.md')).toBe('');

    // The editor saves text; saving an empty document sends no body at all.
    await expectStatus(admin.files.put('/files/projects/notes.md', '# Notes\n'), 200);
    expect(lastSeen('PUT', '/api/resources/projects/notes.md')['content-type']).toBe(TEXT);
    expect(await readDisk('projects/notes.md')).toBe('# Notes\n');
    const opened = await expectStatus(admin.files.fetch('/files/projects/notes.md', true), 200);
    expect(await opened.text()).toBe('# Notes\n');
    await expectStatus(admin.files.put('/files/projects/empty.txt', 'x'), 404);
    await fs.writeFile(onDisk('projects/empty.txt'), 'something');
    await expectStatus(admin.files.put('/files/projects/empty.txt'), 200);
    expect(lastSeen('PUT', '/api/resources/projects/empty.txt')['content-type']).toBeUndefined();
    expect(await readDisk('projects/empty.txt')).toBe('');

    // Uploads without tus: a File keeps its own type (a .json file is application/json and is
    // stored byte for byte, broken or not); an ArrayBuffer has none.
    const json = new Blob(['{"broken": '], { type: 'application/json' });
    await expectStatus(admin.files.post('/files/projects/data.json', json), 200);
    expect(lastSeen('POST', '/api/resources/projects/data.json')['content-type']).toBe('application/json');
    expect(await readDisk('projects/data.json')).toBe('{"broken": ');
    const bytes = crypto.randomBytes(4096);
    await expectStatus(
      admin.files.post('/files/projects/blob.bin', bytes.buffer.slice(0) as ArrayBuffer),
      200,
    );
    expect(lastSeen('POST', '/api/resources/projects/blob.bin')['content-type']).toBeUndefined();
    expect((await fs.readFile(onDisk('projects/blob.bin'))).equals(bytes)).toBe(true);
    await expectStatus(admin.files.post('/files/projects/blob.bin', new Blob(['again'])), 409);
    await expectStatus(admin.files.post('/files/projects/blob.bin', new Blob(['again']), true), 200);
    expect(await readDisk('projects/blob.bin')).toBe('again');

    const sums = await expectStatus(admin.files.checksum('/files/projects/notes.md', 'md5'), 200);
    expect(((await sums.json()) as { checksums: { md5: string } }).checksums.md5).toBe(
      crypto.createHash('md5').update('# Notes\n').digest('hex'),
    );
    const walk = (await (
      await expectStatus(admin.files.fetchAll('/files/projects/'), 200)
    ).json()) as unknown[];
    expect(walk.length).toBeGreaterThanOrEqual(4);

    // Copy and move prompts: PATCH with every flag in the query, no body.
    const patched = async (pending: Promise<Response[]>) => {
      for (const res of await pending) await expectStatus(res, 200);
    };
    await patched(admin.files.copy([{ from: '/files/projects/notes.md', to: '/files/projects/copy.md' }]));
    expect(lastSeen('PATCH', '/api/resources/projects/notes.md')['content-type']).toBeUndefined();
    expect(await readDisk('projects/copy.md')).toBe('# Notes\n');
    await fs.writeFile(onDisk('projects/copy.md'), 'changed');
    for (const res of await admin.files.copy([
      { from: '/files/projects/notes.md', to: '/files/projects/copy.md' },
    ])) {
      await expectStatus(res, 409);
    }
    await patched(
      admin.files.copy([{ from: '/files/projects/notes.md', to: '/files/projects/copy.md' }], true),
    );
    expect(await readDisk('projects/copy.md')).toBe('# Notes\n');
    await patched(
      admin.files.copy([{ from: '/files/projects/notes.md', to: '/files/projects/copy.md' }], false, true),
    );
    const mdFiles = (await fs.readdir(onDisk('projects'))).filter((n) => n.endsWith('.md'));
    expect(mdFiles).toHaveLength(3);
    await patched(admin.files.move([{ from: '/files/projects/copy.md', to: '/files/projects/renamed.md' }]));
    expect(await exists('projects/copy.md')).toBe(false);
    expect(await readDisk('projects/renamed.md')).toBe('# Notes\n');
    await fs.writeFile(onDisk('projects/target.md'), 'in the way');
    await patched(
      admin.files.move([{ from: '/files/projects/renamed.md', to: '/files/projects/target.md' }], true),
    );
    expect(await readDisk('projects/target.md')).toBe('# Notes\n');

    await expectStatus(admin.files.remove('/files/projects/target.md'), 204);
    expect(lastSeen('DELETE', '/api/resources/projects/target.md')['content-type']).toBeUndefined();
    expect(await exists('projects/target.md')).toBe(false);

    const usage = (await (await expectStatus(admin.files.usage('/files/'), 200)).json()) as { total: number };
    expect(usage.total).toBeGreaterThan(0);
  });

  it('downloads, previews and searches through the links and calls it makes', async () => {
    await fs.mkdir(onDisk('docs'));
    await fs.writeFile(onDisk('docs/a.txt'), 'alpha');
    await fs.writeFile(onDisk('report.txt'), 'quarterly');
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .png()
      .toFile(onDisk('photo.png'));

    // files.download opens `/api/raw{path}?` with the cookie, and an archive for several files.
    const raw = await expectStatus(admin.open('/api/raw/docs/a.txt?'), 200);
    expect(lastSeen('GET', '/api/raw/docs/a.txt')['x-auth']).toBeUndefined();
    expect(await raw.text()).toBe('alpha');
    const inline = await expectStatus(admin.open('/api/raw/docs/a.txt?inline=true'), 200);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline/);
    const files = encodeURIComponent('/docs/a.txt,/report.txt');
    const archive = await expectStatus(admin.open(`/api/raw/?files=${files}&algo=zip&`), 200);
    expect(
      Buffer.from(await archive.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');

    const modified = (await fs.stat(onDisk('photo.png'))).mtime;
    const thumb = await expectStatus(
      admin.open(`/api/preview/thumb/photo.png?inline=true&key=${modified.getTime()}`),
      200,
    );
    expect(thumb.headers.get('content-type')).toMatch(/^image\//);

    // The video player's <track> (files.getSubtitlesURL).
    await fs.writeFile(onDisk('film.en.srt'), '1\n00:00:01,000 --> 00:00:02,000\nHello\n');
    const track = await expectStatus(admin.open('/api/subtitle/film.en.srt?inline=true'), 200);
    expect(await track.text()).toContain('WEBVTT');

    const found = await expectStatus(admin.search('/files/', 'a.txt'), 200);
    const lines = (await found.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { path: string });
    expect(lines.map((l) => l.path)).toContain('docs/a.txt');
  });

  it('uploads with tus, resumes after a break, and cancels', async () => {
    await fs.mkdir(onDisk('up'));
    const data = Buffer.from('hello from the old client over tus');
    const chunk = 8;

    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(data, {
        ...admin.tusOptions('/files/up/whole.txt', chunk),
        onError: reject,
        onSuccess: () => resolve(),
      });
      upload.start();
    });
    expect(await readDisk('up/whole.txt')).toBe(data.toString());
    expect(lastSeen('POST', '/api/tus/up/whole.txt')['content-type']).toBeUndefined();
    expect(lastSeen('PATCH', '/api/tus/up/whole.txt')['content-type']).toBe(
      'application/offset+octet-stream',
    );

    /** Starts an upload and stops it once the first chunk is in, as a lost connection or Cancel would. */
    const firstChunkOnly = (file: string, terminate: boolean) =>
      new Promise<string>((resolve, reject) => {
        const upload: tus.Upload = new tus.Upload(data, {
          ...admin.tusOptions(file, chunk),
          onError: reject,
          onSuccess: () => reject(new Error('the upload was meant to stop after its first chunk')),
          onChunkComplete: () => {
            upload.abort(terminate).then(() => resolve(upload.url!), reject);
          },
        });
        upload.start();
      });

    // A retried upload asks where it stands (HEAD) and goes on from there.
    const url = await firstChunkOnly('/files/up/resumed.txt', false);
    expect(await exists('up/resumed.txt')).toBe(false);
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(data, {
        ...admin.tusOptions('/files/up/resumed.txt', chunk),
        uploadUrl: url,
        onError: reject,
        onSuccess: () => resolve(),
      });
      upload.start();
    });
    expect(lastSeen('HEAD', '/api/tus/up/resumed.txt')).toBeDefined();
    expect(await readDisk('up/resumed.txt')).toBe(data.toString());

    // Cancelling an upload terminates it (DELETE): nothing is left behind.
    await firstChunkOnly('/files/up/cancelled.txt', true);
    expect(lastSeen('DELETE', '/api/tus/up/cancelled.txt')).toBeDefined();
    expect(await exists('up/cancelled.txt')).toBe(false);
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });
});

describe('bodies as the old server read them', () => {
  const send = (
    url: string,
    init: { method: string; body?: NonNullable<RequestInit['body']>; headers?: Record<string, string> },
  ) => fetch(origin + url, { ...init, headers: { 'X-Auth': admin.jwt, ...init.headers } });

  it('answers malformed JSON with 400 and the reason, and changes nothing', async () => {
    const settingsBefore = t.ctx.store.settings.get();
    const bad = '{"what":"user","data":';
    for (const [method, url] of [
      ['POST', '/api/users'],
      ['PUT', '/api/users/1'],
      ['PUT', '/api/settings'],
      ['POST', '/api/share/'],
    ] as const) {
      const res = await expectStatus(send(url, { method, body: bad }), 400);
      expect(await res.text()).toMatch(/^400 Bad Request \(the request body is not valid JSON: .+\)\n$/);
      expect(lastSeen(method, url)['content-type']).toBe(TEXT);
    }
    expect((await t.ctx.store.users.list()).map((u) => u.username)).toEqual(['admin']);
    expect(t.ctx.store.settings.get()).toEqual(settingsBefore);
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });

  it('reads JSON sent with no Content-Type or as a form, as scripts for the old server send it', async () => {
    const settings = (await (await expectStatus(admin.settings.get(), 200)).json()) as Record<
      string,
      unknown
    >;
    const noType = new TextEncoder().encode(JSON.stringify({ ...settings, signup: true }));
    await expectStatus(send('/api/settings', { method: 'PUT', body: noType }), 200);
    expect(lastSeen('PUT', '/api/settings')['content-type']).toBeUndefined();
    expect(t.ctx.store.settings.get().signup).toBe(true);

    const user = {
      what: 'user',
      which: [],
      current_password: ADMIN_PASSWORD,
      data: { username: 'eve', password: NEW_PASSWORD },
    };
    await expectStatus(
      send('/api/users', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: JSON.stringify(user),
      }),
      201,
    );
    expect(await t.ctx.store.users.getByUsername('eve')).toBeDefined();
  });

  it('saves the bytes of a PUT without a Content-Type on /api/resources', async () => {
    await fs.writeFile(onDisk('script.sh'), 'old');
    const bytes = new TextEncoder().encode('{"not": "parsed"');
    await expectStatus(send('/api/resources/script.sh', { method: 'PUT', body: bytes }), 200);
    expect(lastSeen('PUT', '/api/resources/script.sh')['content-type']).toBeUndefined();
    expect(await readDisk('script.sh')).toBe('{"not": "parsed"');
  });

  it('takes an empty body labelled application/json where the old server read no body', async () => {
    await fs.writeFile(onDisk('a.txt'), 'a');
    const hash = (
      (await (await expectStatus(admin.share.create('/files/a.txt'), 200)).json()) as { hash: string }
    ).hash;
    const json = { 'Content-Type': 'application/json' };
    await expectStatus(send(`/api/share/${hash}`, { method: 'DELETE', headers: json }), 200);
    expect(await t.ctx.store.shares.get(hash)).toBeUndefined();
    await expectStatus(send('/api/resources/made/', { method: 'POST', headers: json }), 200);
    expect(await exists('made')).toBe(true);
    const rename = '/api/resources/a.txt?action=rename&destination=%2Fb.txt&override=false&rename=false';
    await expectStatus(send(rename, { method: 'PATCH', headers: json }), 200);
    expect(await exists('b.txt')).toBe(true);
    await expectStatus(send('/api/resources/b.txt', { method: 'DELETE', headers: json }), 204);
    expect(await exists('b.txt')).toBe(false);

    await expectStatus(send('/api/renew', { method: 'POST', headers: json }), 200);
  });

  it('still refuses an empty body where the old server needed one, saying why', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const json = { 'Content-Type': 'application/json' };
    const refused = await expectStatus(
      send(`/api/users/${bob.id}`, { method: 'DELETE', headers: json }),
      400,
    );
    expect(await refused.text()).toBe('400 Bad Request (a JSON body is required)\n');
    expect(await t.ctx.store.users.get(bob.id)).toBeDefined();
    await expectStatus(send(`/api/users/${bob.id}`, { method: 'PUT', body: '' }), 400);
    await expectStatus(send('/api/settings', { method: 'PUT', headers: json }), 400);
    await fs.mkdir(onDisk('made'));
    const share = await expectStatus(send('/api/share/made/', { method: 'POST', headers: json }), 400);
    expect(await share.text()).toBe('400 Bad Request (a JSON body {password, expires, unit} is required)\n');
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });

  it('does not judge the body of a request no route takes', async () => {
    await expectStatus(send('/api/nothing', { method: 'POST', body: '{bad' }), 404);
    const json = { 'Content-Type': 'application/json' };
    await expectStatus(send('/api/nothing', { method: 'POST', headers: json, body: '{bad' }), 404);
    await expectStatus(send('/api/usage/', { method: 'POST', body: '{bad' }), 405);
  });

  it('answers 413 to a JSON body over the limit, and changes nothing', async () => {
    const before = t.ctx.store.settings.get();
    const big = JSON.stringify({ branding: { name: 'x'.repeat(JSON_BODY_LIMIT) } });
    await expectStatus(send('/api/settings', { method: 'PUT', body: big }), 413);
    expect(t.ctx.store.settings.get()).toEqual(before);
  });
});
