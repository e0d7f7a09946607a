import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOMParser } from '@xmldom/xmldom';
import { beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD } from './files-helpers.js';
import {
  useDavApp,
  t,
  HOST,
  basic,
  dav,
  file,
  read,
  exists,
  hrefs,
  PROPPATCH,
  PROPGET,
} from './webdav-helpers.js';

/**
 * WebDAV at /dav/: the protocol as clients use it (OPTIONS, Basic credentials and tokens, PROPFIND,
 * PUT and GET, MKCOL, dead properties, COPY and MOVE, shares, the per-user and global switches).
 * Permissions, rules, private paths, escapes and links are in webdav-access.test.ts; locks, request
 * bodies, the base URL and event hooks in webdav-locks.test.ts. Every refusal also checks that
 * nothing changed on disk.
 */
useDavApp();

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

    const ann = (await t.ctx.store.users.getByUsername('ann'))!;
    const { hashPassword } = await import('../src/auth/passwords.js');
    await t.ctx.store.users.update({ ...ann, passwordHash: await hashPassword('a-new-password-for-ann') });
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
    expect((await t.ctx.store.davProps.listWithin('default', '/ann/docs/a b.txt', false)).size).toBe(0);
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
    expect((await t.ctx.store.shares.get(hash))?.path).toBe('/renamed.txt');
    expect((await dav('DELETE', '/dav/renamed.txt', { user: 'ann' })).statusCode).toBe(204);
    expect(await t.ctx.store.shares.get(hash)).toBeUndefined();
  });

  it('per user: only accounts an administrator allowed, set through the users API', async () => {
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), webdav: 'per-user' });
    const refused = await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('WebDAV is not enabled for this account');
    expect((await dav('PUT', '/dav/x.txt', { user: 'ann', body: 'x' })).statusCode).toBe(403);
    expect(await exists('ann', 'x.txt')).toBe(false);

    const admin = await t.app
      .inject({ method: 'POST', url: '/api/login', payload: { username: 'admin', password: PASSWORD } })
      .then((r) => r.body);
    const ann = (await t.ctx.store.users.getByUsername('ann'))!;
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
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), webdav: 'off' });
    expect((await dav('PROPFIND', '/dav/', { user: 'ann', headers: { depth: '0' } })).statusCode).toBe(404);
    expect((await dav('PUT', '/dav/x.txt', { user: 'ann', body: 'x' })).statusCode).toBe(404);
    expect(await exists('ann', 'x.txt')).toBe(false);
  });
});
