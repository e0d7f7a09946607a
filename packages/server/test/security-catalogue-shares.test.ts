import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Permissions } from '@filebrowser/contract';
import { ALL, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';
import { inventory } from './security-catalogue-helpers.js';

/**
 * The attack catalogue, continued: the share cases, folders the server makes for users, the
 * permission matrix of the public endpoints, and who may read the audit log.
 */

async function setScope(t: FilesApp, admin: string, username: string, scope: string) {
  const user = (await t.ctx.store.users.getByUsername(username))!;
  return t.req(admin, {
    method: 'PUT',
    url: `/api/users/${user.id}`,
    payload: {
      what: 'user',
      which: ['scope'],
      current_password: PASSWORD,
      data: { ...user, scope, password: '' },
    },
  });
}

describe('shares', () => {
  let t: FilesApp;
  afterEach(() => t.close());

  it('case 1: a public link to / never lists or serves the database inside the root', async () => {
    t = await startFilesApp(
      (base) => ({ cacheDir: '', database: path.join(base, 'root', 'filebrowser.db') }),
      {},
    );
    const admin = await t.user('whole', { scope: '/' });
    await fs.writeFile(path.join(t.root, 'ok.txt'), 'ok');
    const res = await t.req(admin, { method: 'POST', url: '/api/share/', payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const hash = (res.json() as { hash: string }).hash;
    const listing = await t.app.inject({ method: 'GET', url: `/api/public/share/${hash}` });
    expect(listing.statusCode).toBe(200);
    expect(listing.body).toContain('ok.txt');
    expect(listing.body).not.toMatch(/filebrowser\.db|filebrowser-uploads/);
    for (const name of [
      'filebrowser.db',
      'filebrowser.db-wal',
      'filebrowser.db-shm',
      'filebrowser.db-journal',
    ]) {
      const dl = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/${name}` });
      expect([403, 404], `${name}: ${dl.statusCode}`).toContain(dl.statusCode);
      expect(dl.rawPayload.includes(Buffer.from('SQLite format 3'))).toBe(false);
    }
    const archive = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}?algo=tar` });
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('ok.txt'))).toBe(true);
    expect(archive.rawPayload.includes(Buffer.from('filebrowser.db'))).toBe(false);
    expect(archive.rawPayload.includes(Buffer.from('SQLite format 3'))).toBe(false);
  });

  it('case 6: after the owner’s scope changes, the old link answers 404 instead of another folder', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    await fs.mkdir(path.join(t.root, 'bob/docs'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'bob/docs/a.txt'), 'what was shared');
    await fs.mkdir(path.join(t.root, 'elsewhere/docs'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'elsewhere/docs/a.txt'), 'NOT SHARED');
    const made = await t.req(bob, { method: 'POST', url: '/api/share/docs/a.txt', payload: {} });
    const hash = (made.json() as { hash: string }).hash;
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).body).toBe(
      'what was shared',
    );

    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    const res = await setScope(t, admin, 'bob', '/elsewhere');
    expect(res.statusCode, res.body).toBe(200);
    const after = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` });
    expect(after.statusCode).toBe(404);
    expect(after.body).not.toContain('NOT SHARED');
    const info = await t.app.inject({ method: 'GET', url: `/api/public/share/${hash}` });
    expect(info.statusCode).toBe(404);

    // Given the old scope back, the link serves what was shared again: it points at the item.
    const back = await setScope(t, admin, 'bob', '/bob');
    expect(back.statusCode, back.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).body).toBe(
      'what was shared',
    );
  });

  it('case 7: without download, a copy into a publicly shared folder is refused and nothing leaks', async () => {
    t = await startFilesApp();
    const noDownload: Permissions = { ...ALL, admin: false, download: false, share: false };
    const mallory = await t.user('mallory', { scope: '/team', perm: noDownload });
    const alice = await t.user('alice', { scope: '/team' });
    await fs.mkdir(path.join(t.root, 'team/public'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'team/report.txt'), 'CONFIDENTIAL');
    const made = await t.req(alice, { method: 'POST', url: '/api/share/public', payload: {} });
    const hash = (made.json() as { hash: string }).hash;

    const copy = await t.req(mallory, {
      method: 'PATCH',
      url: '/api/resources/report.txt?action=copy&destination=%2Fpublic%2Freport.txt',
    });
    expect(copy.statusCode).toBe(403);
    expect(copy.body).toMatch(/download permission/);
    await expect(fs.access(path.join(t.root, 'team/public/report.txt'))).rejects.toThrow();
    const dl = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/report.txt` });
    expect(dl.statusCode).toBe(404);
    expect(dl.body).not.toContain('CONFIDENTIAL');
  });
});

describe('case 2: merging a folder into one whose sub-folder is a link to the outside', () => {
  let t: FilesApp;
  let token: string;
  beforeEach(async () => {
    t = await startFilesApp();
    token = await t.user('eve', { perm: { ...ALL, admin: false } });
    const home = path.join(t.root, 'eve');
    await fs.mkdir(path.join(home, 'src/sub'), { recursive: true });
    await fs.writeFile(path.join(home, 'src/sub/new.txt'), 'planted');
    await fs.writeFile(path.join(home, 'src/sub/victim.txt'), 'overwritten');
    await fs.mkdir(path.join(home, 'dst'));
    await fs.writeFile(path.join(t.outside, 'victim.txt'), 'original');
    await fs.symlink(t.outside, path.join(home, 'dst/sub'));
  });
  afterEach(() => t.close());

  for (const action of ['copy', 'rename']) {
    for (const flag of ['override', 'rename']) {
      it(`${action} with ${flag}=true creates and overwrites nothing outside`, async () => {
        const before = await inventory(t.outside);
        const res = await t.req(token, {
          method: 'PATCH',
          url: `/api/resources/src?action=${action}&destination=%2Fdst&${flag}=true`,
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect(await inventory(t.outside)).toEqual(before);
        expect(await fs.readFile(path.join(t.outside, 'victim.txt'), 'utf8')).toBe('original');
        // The link itself is never replaced by a merge either.
        expect((await fs.lstat(path.join(t.root, 'eve/dst/sub'))).isSymbolicLink()).toBe(
          res.statusCode >= 400 || flag === 'rename',
        );
      });
    }
  }
});

describe('folders the server makes for users', () => {
  let t: FilesApp;
  beforeEach(async () => {
    t = await startFilesApp();
  });
  afterEach(() => t.close());

  it('never makes a home folder through a link planted on the way', async () => {
    await fs.symlink(t.outside, path.join(t.root, 'users'));
    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    const before = await inventory(t.outside);
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      createUserDir: true,
      userHomeBasePath: '/users',
    });
    const res = await t.req(admin, {
      method: 'POST',
      url: '/api/users',
      payload: {
        what: 'user',
        which: [],
        current_password: PASSWORD,
        data: {
          username: 'newbie',
          password: 'a-long-enough-password',
          scope: '',
          perm: { ...ALL, admin: false },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(403);
    expect(await inventory(t.outside)).toEqual(before);
    expect(await t.ctx.store.users.getByUsername('newbie')).toBeUndefined();
  });

  it('refuses a scope whose folder would be made through a link', async () => {
    await fs.mkdir(path.join(t.root, 'teams'));
    await fs.symlink(t.outside, path.join(t.root, 'teams', 'out'));
    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    await t.user('carol');
    const res = await setScope(t, admin, 'carol', '/teams/out/new');
    expect(res.statusCode, res.body).toBe(403);
    await expect(fs.access(path.join(t.outside, 'new'))).rejects.toThrow();
    expect((await t.ctx.store.users.getByUsername('carol'))!.scope).toBe('/carol');
  });
});

describe('permission matrix of the public endpoints', () => {
  let t: FilesApp;
  beforeAll(async () => {
    t = await startFilesApp();
  });
  afterAll(() => t.close());

  const PERMS = ['admin', 'execute', 'create', 'rename', 'modify', 'delete', 'share', 'download'] as const;

  it.each(PERMS)('the owner without %s', async (off) => {
    const name = `owner-${off}`;
    const token = await t.user(name, { perm: { ...ALL, admin: false } });
    await fs.mkdir(path.join(t.root, name, 'pub'), { recursive: true });
    await fs.writeFile(path.join(t.root, name, 'pub/a.txt'), 'shared bytes');
    const made = await t.req(token, { method: 'POST', url: '/api/share/pub', payload: {} });
    expect(made.statusCode, made.body).toBe(200);
    const hash = (made.json() as { hash: string }).hash;

    const owner = (await t.ctx.store.users.getByUsername(name))!;
    owner.perm = { ...owner.perm, [off]: false };
    await t.ctx.store.users.update(owner);

    // A link hands files to someone else: it lives while its owner may share and download.
    const serves = off !== 'share' && off !== 'download';
    const calls = {
      listing: `/api/public/share/${hash}`,
      file: `/api/public/dl/${hash}/a.txt`,
      archive: `/api/public/dl/${hash}?algo=tar`,
    };
    for (const [what, url] of Object.entries(calls)) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, `${what} without ${off}: ${res.body.slice(0, 120)}`).toBe(serves ? 200 : 403);
      expect(res.rawPayload.includes(Buffer.from('shared bytes')), what).toBe(serves && what !== 'listing');
    }
  });
});

describe('the audit log', () => {
  let t: FilesApp;
  let admin: string;
  beforeAll(async () => {
    t = await startFilesApp();
    admin = await t.user('boss', { perm: { ...ALL, admin: true } });
  });
  afterAll(() => t.close());

  const token = async (readOnly: boolean) => {
    const res = await t.req(admin, {
      method: 'POST',
      url: '/api/tokens',
      payload: {
        name: readOnly ? 'reader' : 'writer',
        expiresInDays: 0,
        readOnly,
        current_password: PASSWORD,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { secret: string }).secret;
  };
  const urls = ['/api/audit', '/api/audit/export?format=csv', '/api/audit/export?format=json'];

  it('is closed to users without the admin permission, and to none signed in', async () => {
    const user = await t.user('plain', { perm: ALL });
    for (const url of urls) {
      expect((await t.get(user, url)).statusCode, url).toBe(403);
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
  });

  it('is closed to an administrator’s read-only API token, open to a read-write one', async () => {
    const reader = await token(true);
    const writer = await token(false);
    for (const url of urls) {
      const bearer = (secret: string) => ({
        method: 'GET' as const,
        url,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect((await t.app.inject(bearer(reader))).statusCode, url).toBe(403);
      expect((await t.app.inject(bearer(writer))).statusCode, url).toBe(200);
    }
  });

  it('never records a password or a token secret', async () => {
    const secret = await token(false);
    await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'boss', password: 'a-wrong-guess-123' },
    });
    const all = await t.get(admin, '/api/audit/export?format=json');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('auth.login');
    for (const word of [PASSWORD, 'a-wrong-guess-123', secret, secret.slice(-43)])
      expect(all.body).not.toContain(word);
  });
});
