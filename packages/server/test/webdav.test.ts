import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Permissions } from '@filebrowser/contract';
import { DOMParser } from '@xmldom/xmldom';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL, deny, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * WebDAV at /dav/: the protocol as clients use it, and the security catalogue through
 * it: permissions one by one, rules, private paths, escapes in the URL and in Destination,
 * symbolic links, locks of another user, XML bombs and oversized bodies. Every refusal also
 * checks that nothing changed on disk.
 */
let t: FilesApp;
const HOST = 'dav.test';

beforeEach(async () => {
  t = await startFilesApp();
});
afterEach(async () => {
  await t.close();
});

const basic = (user: string, password = PASSWORD) =>
  'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

interface DavOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  user?: string;
  password?: string;
}

function dav(method: string, url: string, opts: DavOptions = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      host: HOST,
      ...(opts.user !== undefined && { authorization: basic(opts.user, opts.password) }),
      ...opts.headers,
    },
    ...(opts.body !== undefined && { payload: opts.body }),
  });
}

const file = (...p: string[]) => path.join(t.root, ...p);
const read = (...p: string[]) => fs.readFile(file(...p), 'utf8');
const exists = (...p: string[]) =>
  fs.lstat(file(...p)).then(
    () => true,
    () => false,
  );

/** Names in a 207 answer's hrefs. */
const hrefs = (body: string) => [...body.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!);

const PROPPATCH = (name: string, value: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:${name}>${value}</Z:${name}></D:prop></D:set></D:propertyupdate>`;
const PROPGET = (name: string) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:${name}/></D:prop></D:propfind>`;
const LOCKINFO = `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me</D:owner></D:lockinfo>`;

describe('WebDAV protocol', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/ann' });
    await fs.mkdir(file('ann', 'docs'));
    await fs.writeFile(file('ann', 'docs', 'a b.txt'), 'hello world');
  });

  it('advertises class 1 and 2 on OPTIONS', async () => {
    const res = await dav('OPTIONS', '/dav/');
    expect(res.statusCode).toBe(200);
    expect(res.headers.dav).toBe('1, 2');
    expect(String(res.headers.allow)).toMatch(/PROPFIND.*PROPPATCH.*MKCOL.*COPY.*MOVE.*LOCK.*UNLOCK/);
  });

  it('asks for Basic credentials, refuses wrong ones, and forgets cached ones when the password changes', async () => {
    const none = await dav('PROPFIND', '/dav/', { headers: { depth: '0' } });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(
      (await dav('PROPFIND', '/dav/', { user: 'ann', password: 'wrong', headers: { depth: '0' } }))
        .statusCode,
    ).toBe(401);
    expect((await dav('PROPFIND', '/dav/', { user: 'nobody', headers: { depth: '0' } })).statusCode).toBe(
      401,
    );
    expect((await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(207);

    const ann = t.ctx.store.users.getByUsername('ann')!;
    const { hashPassword } = await import('../src/auth/passwords.js');
    t.ctx.store.users.update({ ...ann, passwordHash: await hashPassword('a-new-password-for-ann') });
    expect((await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(401);
    const fresh = await dav('PROPFIND', '/dav/', {
      user: 'ann',
      password: 'a-new-password-for-ann',
      headers: { depth: '0' },
    });
    expect(fresh.statusCode).toBe(207);
  });

  it('takes a personal API token as the Basic password, with its limits, and refuses it once revoked', async () => {
    const session = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'ann', password: PASSWORD },
    });
    const token = async (wish: Record<string, unknown>) => {
      const res = await t.req(session.body, {
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'dav', expiresInDays: 0, readOnly: false, ...wish, current_password: PASSWORD },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ id: string; secret: string }>();
    };
    const full = await token({});
    const readOnly = await token({ readOnly: true });
    const folder = await token({ folder: '/docs' });

    const put = (secret: string, url: string) =>
      dav('PUT', url, { user: 'ann', password: secret, body: 'by token' });
    expect((await put(full.secret, '/dav/new.txt')).statusCode).toBe(201);
    expect(await read('ann', 'new.txt')).toBe('by token');

    // Read-only: listing and downloads work, nothing is written.
    expect((await dav('GET', '/dav/docs/a%20b.txt', { user: 'ann', password: readOnly.secret })).body).toBe(
      'hello world',
    );
    expect((await put(readOnly.secret, '/dav/ro.txt')).statusCode).toBe(403);
    expect((await dav('MKCOL', '/dav/ro-dir/', { user: 'ann', password: readOnly.secret })).statusCode).toBe(
      403,
    );
    expect(await exists('ann', 'ro.txt')).toBe(false);

    // Limited to a folder: that folder is the WebDAV root.
    const root = await dav('PROPFIND', '/dav/', {
      user: 'ann',
      password: folder.secret,
      headers: { depth: '1' },
    });
    expect(root.statusCode).toBe(207);
    expect(hrefs(root.body)).toEqual(['/dav/', '/dav/a%20b.txt']);
    expect((await dav('GET', '/dav/../new.txt', { user: 'ann', password: folder.secret })).body).not.toBe(
      'by token',
    );

    // The token is ann's: typed with another name it is refused, with the challenge.
    await t.user('bob', { scope: '/bob' });
    const other = await dav('PROPFIND', '/dav/', {
      user: 'bob',
      password: full.secret,
      headers: { depth: '0' },
    });
    expect(other.statusCode).toBe(401);
    expect(other.headers['www-authenticate']).toMatch(/^Basic realm=/);

    const revoke = await t.req(session.body, { method: 'DELETE', url: `/api/tokens/${full.id}` });
    expect(revoke.statusCode, revoke.body).toBeLessThan(300);
    const revoked = await dav('PROPFIND', '/dav/', {
      user: 'ann',
      password: full.secret,
      headers: { depth: '0' },
    });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });

  it('takes account passwords only while the webdavPasswords setting allows them; tokens always', async () => {
    const login = (username: string) =>
      t.app
        .inject({ method: 'POST', url: '/api/login', payload: { username, password: PASSWORD } })
        .then((r) => r.body);
    const admin = await login('admin');
    const settings = (payload?: Record<string, unknown>) =>
      t.req(admin, { method: payload ? 'PUT' : 'GET', url: '/api/settings', ...(payload && { payload }) });
    const propfind = (password?: string) =>
      dav('PROPFIND', '/dav/', { user: 'ann', password, headers: { depth: '0' } });

    expect((await settings()).json()).toMatchObject({ webdavPasswords: true });
    // Checked once while allowed, so that the refusal below is not a cache miss.
    expect((await propfind()).statusCode).toBe(207);
    const made = await t.req(await login('ann'), {
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'dav', expiresInDays: 0, readOnly: false, current_password: PASSWORD },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { secret } = made.json<{ secret: string }>();

    // A value that is not a boolean is refused and changes nothing.
    for (const bad of ['false', 0, null]) {
      expect((await settings({ webdavPasswords: bad })).statusCode).toBe(400);
    }
    expect(t.ctx.store.settings.get().webdavPasswords).toBe(true);

    const off = await settings({ webdavPasswords: false });
    expect(off.statusCode, off.body).toBe(200);
    expect((await settings()).json()).toMatchObject({ webdavPasswords: false, webdav: 'on' });
    expect(t.ctx.store.settings.get().webdavPasswords).toBe(false);

    const refused = await propfind();
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(refused.body).toContain(
      'WebDAV takes API tokens only on this server: make one in Settings → Profile → API tokens',
    );
    expect((await dav('PUT', '/dav/by-password.txt', { user: 'ann', body: 'x' })).statusCode).toBe(401);
    expect(await exists('ann', 'by-password.txt')).toBe(false);
    // A wrong password gets the same answer: nothing tells whether the password was right.
    expect((await propfind('wrong')).body).toBe(refused.body);
    expect((await propfind(secret)).statusCode).toBe(207);
    expect(
      (await dav('PUT', '/dav/by-token.txt', { user: 'ann', password: secret, body: 't' })).statusCode,
    ).toBe(201);

    // A body without the key (an older client) keeps the setting as it is.
    expect((await settings({ signup: false })).statusCode).toBe(200);
    expect(t.ctx.store.settings.get().webdavPasswords).toBe(false);

    expect((await settings({ webdavPasswords: true })).statusCode).toBe(200);
    expect((await propfind()).statusCode).toBe(207);
  });

  it('counts wrong Basic passwords in the login throttle (429 past it)', async () => {
    let last = 0;
    for (let i = 0; i < 12; i++) {
      last = (
        await dav('PROPFIND', '/dav/', { user: 'ann', password: `wrong-${i}`, headers: { depth: '0' } })
      ).statusCode;
    }
    expect(last).toBe(429);
  });

  it('lists a folder with depth 0 and 1, and refuses depth infinity with propfind-finite-depth', async () => {
    const one = await dav('PROPFIND', '/dav/docs/', { user: 'ann', headers: { depth: '1' } });
    expect(one.statusCode).toBe(207);
    expect(hrefs(one.body)).toEqual(['/dav/docs/', '/dav/docs/a%20b.txt']);
    expect(one.body).toContain('<D:getcontentlength>11</D:getcontentlength>');
    expect(one.body).toContain('<D:resourcetype><D:collection/></D:resourcetype>');
    const etag = /<D:getetag>([^<]*)<\/D:getetag>/.exec(one.body)![1]!.replaceAll('&#34;', '"');
    expect((await dav('HEAD', '/dav/docs/a%20b.txt', { user: 'ann' })).headers.etag).toBe(etag);
    const zero = await dav('PROPFIND', '/dav/docs', { user: 'ann', headers: { depth: '0' } });
    expect(hrefs(zero.body)).toEqual(['/dav/docs/']);
    for (const depth of ['infinity', undefined]) {
      const inf = await dav('PROPFIND', '/dav/', { user: 'ann', headers: depth ? { depth } : {} });
      expect(inf.statusCode).toBe(403);
      expect(inf.body).toContain('<D:propfind-finite-depth/>');
    }
    expect((await dav('PROPFIND', '/dav/missing', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(
      404,
    );
  });

  it('lists names with XML specials and control characters as well-formed XML', async () => {
    await fs.writeFile(file('ann', 'docs', 'a<b>&"c\u0007.txt'), 'x');
    const res = await dav('PROPFIND', '/dav/docs/', { user: 'ann', headers: { depth: '1' } });
    expect(res.statusCode).toBe(207);
    const doc = new DOMParser().parseFromString(res.body, 'application/xml');
    const names = Array.from(doc.getElementsByTagNameNS('DAV:', 'displayname')).map((n) => n.textContent);
    expect(names).toContain('a<b>&"c\uFFFD.txt');
    expect(hrefs(res.body)).toContain('/dav/docs/a%3Cb%3E%26%22c%07.txt');
  });

  it('writes with PUT (created 201, replaced 204, chunked too) and reads with GET and ranges', async () => {
    const put = await dav('PUT', '/dav/docs/new.txt', { user: 'ann', body: 'new content' });
    expect(put.statusCode).toBe(201);
    expect(await read('ann', 'docs', 'new.txt')).toBe('new content');
    expect((await dav('PUT', '/dav/docs/new.txt', { user: 'ann', body: 'replaced' })).statusCode).toBe(204);
    expect(await read('ann', 'docs', 'new.txt')).toBe('replaced');

    const range = await dav('GET', '/dav/docs/a%20b.txt', { user: 'ann', headers: { range: 'bytes=6-10' } });
    expect(range.statusCode).toBe(206);
    expect(range.body).toBe('world');
    expect(range.headers['content-security-policy']).toMatch(/sandbox/);
    const head = await dav('HEAD', '/dav/docs/a%20b.txt', { user: 'ann' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('11');
    expect(head.body).toBe('');

    // Chunked transfer encoding over a real connection.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('chunk one, '));
        c.enqueue(new TextEncoder().encode('chunk two'));
        c.close();
      },
    });
    const res = await fetch(`http://127.0.0.1:${port}/dav/docs/chunked.txt`, {
      method: 'PUT',
      headers: { authorization: basic('ann') },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(201);
    expect(await read('ann', 'docs', 'chunked.txt')).toBe('chunk one, chunk two');
  });

  it('writes a PUT of several batches byte for byte, and leaves nothing of one cut off midway', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const staging = async () => (await fs.readdir(file('ann', 'docs'))).filter((n) => n.includes('.fb-'));
    // Past the first background flush (64 MiB), and not a multiple of the write batch: the
    // last, partial batch must land too.
    const bytes = crypto.randomBytes(67 * 1024 * 1024 + 12345);
    const whole = await fetch(`http://127.0.0.1:${port}/dav/docs/big.bin`, {
      method: 'PUT',
      headers: { authorization: basic('ann') },
      body: bytes,
    });
    expect(whole.status).toBe(201);
    expect((await fs.readFile(file('ann', 'docs', 'big.bin'))).equals(bytes)).toBe(true);

    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/dav/docs/cut.bin',
      headers: { authorization: basic('ann'), 'content-length': String(bytes.length) },
    });
    const closed = new Promise<void>((resolve) => req.on('close', () => resolve()));
    req.on('error', () => undefined);
    req.write(bytes.subarray(0, 3 * 1024 * 1024));
    const until = async (done: () => Promise<boolean>) => {
      for (let i = 0; i < 500 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
    };
    // Cut once more than a batch is on disk, so that the server stops with writes under way.
    const onDisk = async () => {
      const [name] = await staging();
      return !!name && (await fs.stat(file('ann', 'docs', name))).size >= 2 * 1024 * 1024;
    };
    await until(onDisk);
    expect(await onDisk()).toBe(true);
    req.destroy();
    await closed;
    await until(async () => (await staging()).length === 0);
    expect(await staging()).toEqual([]);
    expect(await exists('ann', 'docs', 'cut.bin')).toBe(false);
  });

  it('answers 409 for a missing parent, and MKCOL 405 on an existing name and 415 with a body', async () => {
    expect((await dav('PUT', '/dav/nope/x.txt', { user: 'ann', body: 'x' })).statusCode).toBe(409);
    expect((await dav('MKCOL', '/dav/nope/sub', { user: 'ann' })).statusCode).toBe(409);
    expect(await exists('ann', 'nope')).toBe(false);
    expect((await dav('MKCOL', '/dav/docs', { user: 'ann' })).statusCode).toBe(405);
    expect((await dav('MKCOL', '/dav/withbody', { user: 'ann', body: '<x/>' })).statusCode).toBe(415);
    expect(await exists('ann', 'withbody')).toBe(false);
    expect((await dav('MKCOL', '/dav/made', { user: 'ann' })).statusCode).toBe(201);
    expect((await fs.stat(file('ann', 'made'))).isDirectory()).toBe(true);
  });

  it('keeps dead properties, which follow MOVE and COPY and go with DELETE', async () => {
    const set = await dav('PROPPATCH', '/dav/docs/a%20b.txt', {
      user: 'ann',
      body: PROPPATCH('color', 'blue'),
    });
    expect(set.statusCode).toBe(207);
    expect(set.body).toContain('HTTP/1.1 200 OK');
    const get = (url: string) =>
      dav('PROPFIND', url, { user: 'ann', headers: { depth: '0' }, body: PROPGET('color') });
    expect((await get('/dav/docs/a%20b.txt')).body).toMatch(/<Z:color xmlns:Z="urn:z">blue<\/Z:color>/);

    const dest = { destination: `http://${HOST}/dav/moved/` };
    expect((await dav('MOVE', '/dav/docs/', { user: 'ann', headers: dest })).statusCode).toBe(201);
    expect((await get('/dav/moved/a%20b.txt')).body).toContain('blue');
    expect(
      (await dav('COPY', '/dav/moved/a%20b.txt', { user: 'ann', headers: { destination: '/dav/copy.txt' } }))
        .statusCode,
    ).toBe(201);
    expect((await get('/dav/copy.txt')).body).toContain('blue');
    expect((await dav('DELETE', '/dav/copy.txt', { user: 'ann' })).statusCode).toBe(204);
    await fs.writeFile(file('ann', 'copy.txt'), 'again');
    const after = await get('/dav/copy.txt');
    expect(after.body).not.toContain('blue');
    expect(after.body).toContain('404 Not Found');
  });

  it('keeps dead properties with the file when the web API renames it, and drops them when it deletes it', async () => {
    const token = await t.app
      .inject({ method: 'POST', url: '/api/login', payload: { username: 'ann', password: PASSWORD } })
      .then((r) => r.body);
    await dav('PROPPATCH', '/dav/docs/a%20b.txt', { user: 'ann', body: PROPPATCH('color', 'green') });
    const rename = await t.req(token, {
      method: 'PATCH',
      url: '/api/resources/docs?action=rename&destination=%2Fpapers',
    });
    expect(rename.statusCode).toBe(200);
    const get = (url: string) =>
      dav('PROPFIND', url, { user: 'ann', headers: { depth: '0' }, body: PROPGET('color') });
    expect((await get('/dav/papers/a%20b.txt')).body).toContain('green');
    expect((await t.req(token, { method: 'DELETE', url: '/api/resources/papers' })).statusCode).toBe(204);
    await fs.mkdir(file('ann', 'papers'));
    await fs.writeFile(file('ann', 'papers', 'a b.txt'), 'new file, old name');
    expect((await get('/dav/papers/a%20b.txt')).body).not.toContain('green');
  });

  it('refuses to change live properties in PROPPATCH, all or nothing', async () => {
    const body = `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:color>red</Z:color><D:getetag>x</D:getetag></D:prop></D:set></D:propertyupdate>`;
    const res = await dav('PROPPATCH', '/dav/docs/a%20b.txt', { user: 'ann', body });
    expect(res.statusCode).toBe(207);
    expect(res.body).toContain('403 Forbidden');
    expect(res.body).toContain('424 Failed Dependency');
    expect(t.ctx.store.davProps.listWithin('default', '/ann/docs/a b.txt', false).size).toBe(0);
  });

  it('honours Overwrite and Depth on COPY and MOVE', async () => {
    await fs.writeFile(file('ann', 'other.txt'), 'other');
    const to = { destination: '/dav/other.txt' };
    const f = await dav('COPY', '/dav/docs/a%20b.txt', { user: 'ann', headers: { ...to, overwrite: 'F' } });
    expect(f.statusCode).toBe(412);
    expect(await read('ann', 'other.txt')).toBe('other');
    expect((await dav('COPY', '/dav/docs/a%20b.txt', { user: 'ann', headers: to })).statusCode).toBe(204);
    expect(await read('ann', 'other.txt')).toBe('hello world');

    const shallow = await dav('COPY', '/dav/docs/', {
      user: 'ann',
      headers: { destination: '/dav/empty/', depth: '0' },
    });
    expect(shallow.statusCode).toBe(201);
    expect(await fs.readdir(file('ann', 'empty'))).toEqual([]);
    expect(
      (await dav('MOVE', '/dav/docs/', { user: 'ann', headers: { destination: '/dav/x/', depth: '0' } }))
        .statusCode,
    ).toBe(400);
  });

  it('moves and deletes shares with the files, as the web API does', async () => {
    const token = await t.app
      .inject({ method: 'POST', url: '/api/login', payload: { username: 'ann', password: PASSWORD } })
      .then((r) => r.body);
    const share = await t.req(token, { method: 'POST', url: '/api/share/docs/a%20b.txt', payload: {} });
    expect(share.statusCode).toBe(200);
    const hash = (share.json() as { hash: string }).hash;
    expect(
      (
        await dav('MOVE', '/dav/docs/a%20b.txt', {
          user: 'ann',
          headers: { destination: '/dav/renamed.txt' },
        })
      ).statusCode,
    ).toBe(201);
    expect(t.ctx.store.shares.get(hash)?.path).toBe('/renamed.txt');
    expect((await dav('DELETE', '/dav/renamed.txt', { user: 'ann' })).statusCode).toBe(204);
    expect(t.ctx.store.shares.get(hash)).toBeUndefined();
  });

  it('per user: only accounts an administrator allowed, set through the users API', async () => {
    t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), webdav: 'per-user' });
    const refused = await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('WebDAV is not enabled for this account');
    expect((await dav('PUT', '/dav/x.txt', { user: 'ann', body: 'x' })).statusCode).toBe(403);
    expect(await exists('ann', 'x.txt')).toBe(false);

    const admin = await t.app
      .inject({ method: 'POST', url: '/api/login', payload: { username: 'admin', password: PASSWORD } })
      .then((r) => r.body);
    const ann = t.ctx.store.users.getByUsername('ann')!;
    const put = await t.req(admin, {
      method: 'PUT',
      url: `/api/users/${ann.id}`,
      payload: { what: 'user', which: ['webdav'], current_password: PASSWORD, data: { webdav: true } },
    });
    expect(put.statusCode, put.body).toBe(200);
    const shown = await t.req(admin, { method: 'GET', url: `/api/users/${ann.id}` });
    expect(shown.json()).toMatchObject({ webdav: true });
    expect((await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(207);
  });

  it('is turned off by the webdav setting', async () => {
    t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), webdav: 'off' });
    expect((await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(404);
    expect((await dav('PUT', '/dav/x.txt', { user: 'ann', body: 'x' })).statusCode).toBe(404);
    expect(await exists('ann', 'x.txt')).toBe(false);
  });
});

describe('WebDAV permissions, one by one', () => {
  // Sharing needs download, so a user without download cannot share either.
  const without = (p: keyof Permissions): Permissions => ({
    ...ALL,
    [p]: false,
    ...(p === 'download' && { share: false }),
  });

  beforeEach(async () => {
    for (const p of ['create', 'modify', 'delete', 'rename', 'download'] as const) {
      await t.user(`no-${p}`, { scope: '/shared', perm: without(p) });
    }
    await fs.mkdir(file('shared', 'dir'), { recursive: true });
    await fs.writeFile(file('shared', 'f.txt'), 'original');
  });

  const lockNew = (user: string) => dav('LOCK', '/dav/locked-new.txt', { user, body: LOCKINFO });

  it('without create: no PUT of a new file, no MKCOL, no LOCK of an unmapped URL, no COPY', async () => {
    const u = 'no-create';
    expect((await dav('PUT', '/dav/new.txt', { user: u, body: 'x' })).statusCode).toBe(403);
    expect((await dav('MKCOL', '/dav/newdir', { user: u })).statusCode).toBe(403);
    expect((await lockNew(u)).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect((await dav('PUT', '/dav/f.txt', { user: u, body: 'changed' })).statusCode).toBe(204);
    expect((await fs.readdir(file('shared'))).sort()).toEqual(['dir', 'f.txt']);
  });

  it('without modify: no PUT over a file, no PROPPATCH, no overwriting COPY', async () => {
    const u = 'no-modify';
    expect((await dav('PUT', '/dav/f.txt', { user: u, body: 'changed' })).statusCode).toBe(403);
    expect((await dav('PROPPATCH', '/dav/f.txt', { user: u, body: PROPPATCH('a', 'b') })).statusCode).toBe(
      403,
    );
    await fs.writeFile(file('shared', 'g.txt'), 'g');
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect(await read('shared', 'f.txt')).toBe('original');
    expect(await read('shared', 'g.txt')).toBe('g');
    expect((await dav('PUT', '/dav/new.txt', { user: u, body: 'x' })).statusCode).toBe(201);
  });

  it('without delete: no DELETE', async () => {
    expect((await dav('DELETE', '/dav/f.txt', { user: 'no-delete' })).statusCode).toBe(403);
    expect((await dav('DELETE', '/dav/dir/', { user: 'no-delete' })).statusCode).toBe(403);
    expect(await exists('shared', 'f.txt')).toBe(true);
    expect(await exists('shared', 'dir')).toBe(true);
  });

  it('without rename: no MOVE', async () => {
    expect(
      (await dav('MOVE', '/dav/f.txt', { user: 'no-rename', headers: { destination: '/dav/g.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(await exists('shared', 'f.txt')).toBe(true);
    expect(await exists('shared', 'g.txt')).toBe(false);
  });

  it('without download: no GET of bytes and no COPY, but listing still works', async () => {
    const u = 'no-download';
    expect((await dav('GET', '/dav/f.txt', { user: u })).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect(await exists('shared', 'g.txt')).toBe(false);
    expect((await dav('PROPFIND', '/dav/', { user: u, headers: { depth: '1' } })).statusCode).toBe(207);
  });
});

describe('WebDAV rules, private paths, escapes and links', () => {
  beforeEach(async () => {
    await t.user('rob', { scope: '/rob', rules: [deny('/secret')] });
    await fs.mkdir(file('rob', 'secret'));
    await fs.writeFile(file('rob', 'secret', 'key.txt'), 'do not read');
    await fs.writeFile(file('rob', 'open.txt'), 'open');
    await fs.writeFile(path.join(t.outside, 'passwd'), 'outside the root');
  });

  it('hides and refuses what the rules deny, as a source and as a Destination', async () => {
    const list = await dav('PROPFIND', '/dav/', { user: 'rob', headers: { depth: '1' } });
    expect(hrefs(list.body)).toEqual(['/dav/', '/dav/open.txt']);
    expect((await dav('GET', '/dav/secret/key.txt', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('PROPFIND', '/dav/secret/', { user: 'rob', headers: { depth: '1' } })).statusCode).toBe(
      403,
    );
    expect((await dav('PUT', '/dav/secret/new.txt', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/secret/key.txt', { user: 'rob', headers: { destination: '/dav/out.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(
      (await dav('MOVE', '/dav/open.txt', { user: 'rob', headers: { destination: '/dav/secret/open.txt' } }))
        .statusCode,
    ).toBe(403);
    expect((await dav('DELETE', '/dav/secret/', { user: 'rob' })).statusCode).toBe(403);
    expect(await fs.readdir(file('rob', 'secret'))).toEqual(['key.txt']);
    expect(await exists('rob', 'out.txt')).toBe(false);
    expect(await exists('rob', 'open.txt')).toBe(true);
  });

  it('never leaves the scope through dot segments or backslashes in the URL', async () => {
    for (const url of [
      '/dav/..%2F..%2Foutside/passwd',
      '/dav/%2e%2e/%2e%2e/outside/passwd',
      '/dav/a%5C..%5C..%5Cpasswd',
    ]) {
      const res = await dav('GET', url, { user: 'rob' });
      expect(res.statusCode, url).not.toBe(200);
      expect(res.body).not.toContain('outside the root');
      expect((await dav('PUT', url, { user: 'rob', body: 'planted' })).statusCode, url).not.toBe(201);
    }
    expect(await fs.readFile(path.join(t.outside, 'passwd'), 'utf8')).toBe('outside the root');
  });

  it('refuses a Destination on another host or outside /dav/ with 502, and dot segments in it', async () => {
    for (const destination of [
      'http://evil.example/dav/stolen.txt',
      `http://${HOST}/api/resources/stolen.txt`,
      `http://${HOST}/dav/../../stolen.txt`,
      'ftp://dav.test/dav/stolen.txt',
    ]) {
      for (const method of ['COPY', 'MOVE']) {
        const res = await dav(method, '/dav/open.txt', { user: 'rob', headers: { destination } });
        expect(res.statusCode, `${method} ${destination}`).toBe(502);
      }
    }
    const dots = await dav('COPY', '/dav/open.txt', {
      user: 'rob',
      headers: { destination: '/dav/%2e%2e/%2e%2e/stolen.txt' },
    });
    expect(dots.statusCode).toBe(400);
    expect(await fs.readdir(file('rob'))).toEqual(expect.arrayContaining(['open.txt', 'secret']));
    expect(await fs.readdir(t.root)).toEqual(['rob']);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
  });

  it('does not follow a link out of the scope, for reading, writing, listing or as a Destination', async () => {
    await fs.symlink(t.outside, file('rob', 'escape'));
    await fs.symlink(path.join(t.outside, 'passwd'), file('rob', 'passwd-link'));
    const list = await dav('PROPFIND', '/dav/', { user: 'rob', headers: { depth: '1' } });
    expect(hrefs(list.body)).not.toContain('/dav/escape/');
    expect((await dav('GET', '/dav/passwd-link', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('GET', '/dav/escape/passwd', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('PROPFIND', '/dav/escape/', { user: 'rob', headers: { depth: '1' } })).statusCode).toBe(
      403,
    );
    expect((await dav('PUT', '/dav/escape/planted.txt', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect((await dav('PUT', '/dav/passwd-link', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect(
      (
        await dav('COPY', '/dav/open.txt', {
          user: 'rob',
          headers: { destination: '/dav/escape/copied.txt' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await dav('MOVE', '/dav/open.txt', { user: 'rob', headers: { destination: '/dav/escape/moved.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
    expect(await fs.readFile(path.join(t.outside, 'passwd'), 'utf8')).toBe('outside the root');
    // The link itself may go: DELETE removes the link, never its target.
    expect((await dav('DELETE', '/dav/escape', { user: 'rob' })).statusCode).toBe(204);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
  });
});

describe('WebDAV private paths', () => {
  it('never lists or serves the database kept inside the served folder', async () => {
    await t.close();
    t = await startFilesApp((base) => ({
      cacheDir: '',
      database: path.join(base, 'root', 'filebrowser.db'),
    }));
    await t.user('whole', { scope: '/' });
    const list = await dav('PROPFIND', '/dav/', { user: 'whole', headers: { depth: '1' } });
    expect(list.statusCode).toBe(207);
    expect(list.body).not.toContain('filebrowser.db');
    for (const method of ['GET', 'PROPFIND', 'DELETE', 'PUT', 'LOCK']) {
      const res = await dav(method, '/dav/filebrowser.db', {
        user: 'whole',
        headers: { depth: '0' },
        ...(method === 'PUT' && { body: 'overwrite' }),
        ...(method === 'LOCK' && { body: LOCKINFO }),
      });
      expect(res.statusCode, method).toBe(403);
    }
    const move = await dav('MOVE', '/dav/x', {
      user: 'whole',
      headers: { destination: '/dav/filebrowser.db' },
    });
    expect([403, 404]).toContain(move.statusCode);
    expect((await fs.readFile(file('filebrowser.db'))).subarray(0, 15).toString()).toBe('SQLite format 3');
  });
});

describe('WebDAV locks between users', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/team' });
    await t.user('bob', { scope: '/team' });
    await fs.writeFile(file('team', 'plan.txt'), 'ann writes this');
  });

  async function annLocks(url = '/dav/plan.txt', depth = 'infinity'): Promise<string> {
    const res = await dav('LOCK', url, {
      user: 'ann',
      body: LOCKINFO,
      headers: { depth, timeout: 'Second-600' },
    });
    expect([200, 201]).toContain(res.statusCode);
    expect(res.body).toContain('<D:timeout>Second-600</D:timeout>');
    return String(res.headers['lock-token']).slice(1, -1);
  }

  it("refuses another user's writes with 423, even with the stolen token", async () => {
    const token = await annLocks();
    expect(token).toMatch(/^opaquelocktoken:[0-9a-f-]{36}$/);
    const ifHeader = { if: `(<${token}>)` };
    const put = await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob was here' });
    expect(put.statusCode).toBe(423);
    expect(put.body).toContain('<D:lock-token-submitted><D:href>/dav/plan.txt</D:href>');
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob was here', headers: ifHeader }))
        .statusCode,
    ).toBe(423);
    expect((await dav('DELETE', '/dav/plan.txt', { user: 'bob', headers: ifHeader })).statusCode).toBe(423);
    expect(
      (
        await dav('MOVE', '/dav/plan.txt', {
          user: 'bob',
          headers: { ...ifHeader, destination: '/dav/x.txt' },
        })
      ).statusCode,
    ).toBe(423);
    expect(
      (await dav('PROPPATCH', '/dav/plan.txt', { user: 'bob', body: PROPPATCH('a', 'b'), headers: ifHeader }))
        .statusCode,
    ).toBe(423);
    expect((await dav('LOCK', '/dav/plan.txt', { user: 'bob', body: LOCKINFO })).statusCode).toBe(423);
    expect(
      (await dav('UNLOCK', '/dav/plan.txt', { user: 'bob', headers: { 'lock-token': `<${token}>` } }))
        .statusCode,
    ).toBe(403);
    expect(await read('team', 'plan.txt')).toBe('ann writes this');

    expect((await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'ann again' })).statusCode).toBe(423);
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'ann again', headers: ifHeader })).statusCode,
    ).toBe(204);
    expect(
      (await dav('UNLOCK', '/dav/plan.txt', { user: 'ann', headers: { 'lock-token': `<${token}>` } }))
        .statusCode,
    ).toBe(204);
    expect((await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob now' })).statusCode).toBe(204);
  });

  it('protects members of a folder locked with depth infinity, and creates a file on LOCK of an unmapped URL', async () => {
    await fs.mkdir(file('team', 'dir'));
    const token = await annLocks('/dav/dir/');
    expect((await dav('PUT', '/dav/dir/new.txt', { user: 'bob', body: 'x' })).statusCode).toBe(423);
    expect((await dav('MKCOL', '/dav/dir/sub', { user: 'bob' })).statusCode).toBe(423);
    expect(await fs.readdir(file('team', 'dir'))).toEqual([]);
    expect(
      (await dav('PUT', '/dav/dir/new.txt', { user: 'ann', body: 'x', headers: { if: `(<${token}>)` } }))
        .statusCode,
    ).toBe(201);

    const created = await dav('LOCK', '/dav/fresh.txt', { user: 'bob', body: LOCKINFO });
    expect(created.statusCode).toBe(201);
    expect(await read('team', 'fresh.txt')).toBe('');
  });

  it('lists locks in lockdiscovery, refreshes with If, and drops expired ones', async () => {
    const token = await annLocks();
    const found = await dav('PROPFIND', '/dav/plan.txt', {
      user: 'bob',
      headers: { depth: '0' },
      body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
    });
    expect(found.body).toContain(token);
    const refreshed = await dav('LOCK', '/dav/plan.txt', {
      user: 'ann',
      headers: { if: `(<${token}>)`, timeout: 'Second-900' },
    });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.body).toContain('Second-900');
    expect(
      (await dav('LOCK', '/dav/plan.txt', { user: 'bob', headers: { if: `(<${token}>)` } })).statusCode,
    ).toBe(403);
    t.ctx.store.davLocks.refresh(token, 1, Date.now() - 1);
    expect((await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'expired lock' })).statusCode).toBe(204);
  });

  it('evaluates tagged If lists against the resource they name, with entity tags and Not', async () => {
    const token = await annLocks();
    await fs.writeFile(file('team', 'other.txt'), 'other');
    const put = (body: string, ifHeader: string) =>
      dav('PUT', '/dav/plan.txt', { user: 'ann', body, headers: { if: ifHeader } });
    expect((await put('a', `</dav/other.txt> (<${token}>)`)).statusCode).toBe(412);
    expect((await put('b', `<http://${HOST}/dav/plan.txt> (Not <DAV:no-lock> <${token}>)`)).statusCode).toBe(
      204,
    );
    const etag = String((await dav('HEAD', '/dav/plan.txt', { user: 'ann' })).headers.etag);
    expect((await put('c', `(<${token}> ["not-${etag.slice(1)}])`)).statusCode).toBe(412);
    expect((await put('d', `(<${token}> [${etag}])`)).statusCode).toBe(204);
    expect((await put('e', `(["x"]) (<${token}>)`)).statusCode).toBe(204);
    expect(await read('team', 'plan.txt')).toBe('e');
  });

  it('answers 412 when the If header does not hold, and 400 for a malformed one', async () => {
    const res = await dav('PUT', '/dav/plan.txt', {
      user: 'ann',
      body: 'x',
      headers: { if: '(["wrong-etag"])' },
    });
    expect(res.statusCode).toBe(412);
    const not = await dav('PUT', '/dav/plan.txt', {
      user: 'ann',
      body: 'y',
      headers: { if: '(<DAV:no-lock>)' },
    });
    expect(not.statusCode).toBe(412);
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'z', headers: { if: '(<unclosed' } }))
        .statusCode,
    ).toBe(400);
    expect(await read('team', 'plan.txt')).toBe('ann writes this');
  });
});

describe('WebDAV request bodies', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/ann' });
    await fs.writeFile(file('ann', 'f.txt'), 'f');
  });

  const BOMB = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&lol3;</D:displayname></D:prop></D:propfind>`;
  const EXTERNAL = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:p>&xxe;</Z:p></D:prop></D:set></D:propertyupdate>`;

  it('refuses XML bombs, external entities and malformed XML with 400 in PROPFIND, PROPPATCH and LOCK', async () => {
    for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
      for (const body of [BOMB, EXTERNAL, '<D:propfind xmlns:D="DAV:"><unclosed>']) {
        const res = await dav(method, '/dav/f.txt', { user: 'ann', headers: { depth: '0' }, body });
        expect(res.statusCode, `${method} ${body.slice(0, 40)}`).toBe(400);
        expect(res.body).not.toContain('root:');
      }
    }
    expect(t.ctx.store.davProps.listWithin('default', '/ann/f.txt', false).size).toBe(0);
    expect(t.ctx.store.davLocks.related('default', '/ann/f.txt')).toEqual([]);
  });

  it('refuses bodies over 1 MiB with 413 in PROPFIND, PROPPATCH and LOCK', async () => {
    const huge = `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:p>${'x'.repeat(2 * 1024 * 1024)}</Z:p></D:prop></D:set></D:propertyupdate>`;
    for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
      const res = await dav(method, '/dav/f.txt', { user: 'ann', headers: { depth: '0' }, body: huge });
      expect(res.statusCode, method).toBe(413);
    }
    expect(t.ctx.store.davProps.listWithin('default', '/ann/f.txt', false).size).toBe(0);
  });
});

describe('WebDAV under a base URL', () => {
  it('answers at {baseURL}/dav/ with hrefs and Destinations under it', async () => {
    await t.close();
    t = await startFilesApp({ baseURL: '/fb' });
    await t.user('ann', { scope: '/ann' });
    await fs.writeFile(file('ann', 'a.txt'), 'a');
    const list = await dav('PROPFIND', '/fb/dav/', { user: 'ann', headers: { depth: '1' } });
    expect(list.statusCode).toBe(207);
    expect(hrefs(list.body)).toEqual(['/fb/dav/', '/fb/dav/a.txt']);
    const copy = await dav('COPY', '/fb/dav/a.txt', {
      user: 'ann',
      headers: { destination: `http://${HOST}/fb/dav/b.txt` },
    });
    expect(copy.statusCode).toBe(201);
    expect(await read('ann', 'b.txt')).toBe('a');
    const outside = await dav('COPY', '/fb/dav/a.txt', {
      user: 'ann',
      headers: { destination: `http://${HOST}/dav/c.txt` },
    });
    expect(outside.statusCode).toBe(502);
  });
});

describe('WebDAV and event hooks', () => {
  it('runs the same before and after hooks as the web API, and a refusing hook changes nothing, not even an overwritten destination', async () => {
    await t.close();
    const bin = path.join(os.tmpdir(), `fb-dav-hooks-${process.pid}-${Date.now()}`);
    await fs.mkdir(bin);
    const logFile = path.join(bin, 'log.txt');
    await fs.writeFile(
      path.join(bin, 'log'),
      `#!/bin/sh\nprintf "%s %s\\n" "$TRIGGER" "$*" >> '${logFile}'\n`,
      { mode: 0o755 },
    );
    await fs.writeFile(path.join(bin, 'refuse'), '#!/bin/sh\necho "not today" >&2; exit 3\n', {
      mode: 0o755,
    });
    try {
      t = await startFilesApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` });
      await t.user('bob', { scope: '/bob' });
      const home = await fs.realpath(file('bob'));
      const s = t.ctx.store.settings.get();
      const commands = Object.fromEntries(Object.keys(s.commands).map((k) => [k, [] as string[]]));
      t.ctx.store.settings.save({
        ...s,
        commands: {
          ...commands,
          before_upload: ['log $FILE'],
          after_save: ['log $FILE'],
          after_rename: ['log $FILE $DESTINATION'],
          before_delete: ['refuse'],
          before_copy: ['refuse'],
        },
      });
      expect((await dav('PUT', '/dav/a.txt', { user: 'bob', body: 'a' })).statusCode).toBe(201);
      expect((await dav('PUT', '/dav/a.txt', { user: 'bob', body: 'b' })).statusCode).toBe(204);
      expect(
        (await dav('MOVE', '/dav/a.txt', { user: 'bob', headers: { destination: '/dav/b.txt' } })).statusCode,
      ).toBe(201);
      const del = await dav('DELETE', '/dav/b.txt', { user: 'bob' });
      expect(del.statusCode).toBe(403);
      expect(del.body).toContain('the before_delete hook refused the operation');
      expect(await read('bob', 'b.txt')).toBe('b');
      // An overwriting COPY removes the destination only once the before-hook let it go ahead.
      await fs.writeFile(file('bob', 'c.txt'), 'keep me');
      const copy = await dav('COPY', '/dav/b.txt', { user: 'bob', headers: { destination: '/dav/c.txt' } });
      expect(copy.statusCode).toBe(403);
      expect(await read('bob', 'c.txt')).toBe('keep me');
      expect((await fs.readFile(logFile, 'utf8')).trimEnd().split('\n')).toEqual([
        `before_upload ${path.join(home, 'a.txt')}`,
        `after_save ${path.join(home, 'a.txt')}`,
        `after_rename ${path.join(home, 'a.txt')} ${path.join(home, 'b.txt')}`,
      ]);
    } finally {
      await fs.rm(bin, { recursive: true, force: true });
    }
  });
});
