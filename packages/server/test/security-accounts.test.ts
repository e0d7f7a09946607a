import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { passwordComparesStarted } from '../src/auth/passwords.js';
import { runCli, type CliIO } from '../src/cli/index.js';
import { ConfigError } from '../src/config/config-error.js';
import { loadConfig } from '../src/config/load.js';
import { migrate, SCHEMA_BEFORE_NFKC_KEYS } from '../src/store/db.js';
import { openStore } from '../src/store/index.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * Accounts and sessions, tried as an attacker would: parallel guesses,
 * locking someone out from elsewhere, look-alike names, cross-site requests, login timing and
 * revocation. Client addresses come from X-Forwarded-For, which the server believes from its
 * trusted proxies (loopback by default, where app.inject connects from).
 */

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

const LIMIT = 10; // the default loginRateLimit

const login = (username: string, password: string, from = '203.0.113.5') =>
  t.app.inject({
    method: 'POST',
    url: '/api/login',
    headers: { 'x-forwarded-for': from },
    payload: { username, password },
  });

function statuses(answers: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.statusCode] = (counts[a.statusCode] ?? 0) + 1;
  return counts;
}

describe('parallel guesses are counted before the password is checked', () => {
  it('200 parallel wrong logins run exactly the limit of bcrypt checks; the rest get 429 with Retry-After', async () => {
    const before = passwordComparesStarted();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => login('admin', `wrong-password-${i}`)),
    );
    expect(passwordComparesStarted() - before).toBe(LIMIT);
    expect(statuses(answers)).toEqual({ 403: LIMIT, 429: 200 - LIMIT });
    for (const a of answers.filter((x) => x.statusCode === 429)) {
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
      expect(a.body).toBe('429 Too Many Requests (too many login attempts, try again later)\n');
    }
    // The guessing address is held back, the admin elsewhere is not.
    expect((await login('admin', ADMIN_PASSWORD)).statusCode).toBe(429);
    expect((await login('admin', ADMIN_PASSWORD, '198.51.100.7')).statusCode).toBe(200);
  });

  it('200 parallel wrong share passwords run exactly the limit of bcrypt checks; the rest get 429', async () => {
    fs.writeFileSync(path.join(t.root, 'a.txt'), 'shared');
    const created = await t.request(t.adminToken, {
      method: 'POST',
      url: '/api/share/a.txt',
      payload: { password: 'the-right-one' },
    });
    expect(created.statusCode).toBe(200);
    const hash = (created.json() as { hash: string }).hash;
    const guess = (password: string, from = '203.0.113.5') =>
      t.app.inject({
        method: 'GET',
        url: `/api/public/share/${hash}`,
        headers: { 'x-forwarded-for': from, 'x-share-password': encodeURIComponent(password) },
      });

    const before = passwordComparesStarted();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => guess(`wrong-${i}`)));
    expect(passwordComparesStarted() - before).toBe(LIMIT);
    expect(statuses(answers)).toEqual({ 401: LIMIT, 429: 200 - LIMIT });
    for (const a of answers.filter((x) => x.statusCode === 429)) {
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
      expect(a.body).toBe('429 Too Many Requests (too many password attempts, try again later)\n');
    }
    expect((await guess('the-right-one')).statusCode).toBe(429);
    const visitor = await guess('the-right-one', '198.51.100.7');
    expect(visitor.statusCode).toBe(200);
    expect((visitor.json() as { token?: string }).token).toBeTruthy();
  });
});

describe('nobody can lock a user out from another address', () => {
  it('wrong passwords from one address leave the right one working from another', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 50; i++) answers.push((await login('admin', 'wrong-wrong-wrong')).statusCode);
    expect(answers.slice(0, LIMIT).every((s) => s === 403)).toBe(true);
    expect(answers.slice(LIMIT).every((s) => s === 429)).toBe(true);
    expect((await login('admin', ADMIN_PASSWORD)).statusCode).toBe(429);

    const token = await login('admin', ADMIN_PASSWORD, '198.51.100.7');
    expect(token.statusCode).toBe(200);
    expect((await t.request(token.body, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
    // Also over IPv6, and with the name typed in capitals.
    expect((await login('ADMIN', ADMIN_PASSWORD, '2001:db8:5::1')).statusCode).toBe(200);
  });

  it('many addresses guessing one user only tighten their own allowance (a quarter of the limit)', async () => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await login('admin', 'wrong-wrong-wrong', `203.0.113.${i + 1}`)).statusCode).toBe(403);
    }
    const next = [1, 2, 3, 4].map(() => '192.0.2.99');
    const seen: number[] = [];
    for (const from of next) seen.push((await login('admin', 'wrong-wrong-wrong', from)).statusCode);
    expect(seen).toEqual([403, 403, 403, 429]);
    expect((await login('admin', ADMIN_PASSWORD, '192.0.2.100')).statusCode).toBe(200);
  });

  it('a correct login forgets the failures of that address for that user', async () => {
    await t.createUser({ username: 'bob' });
    for (let i = 0; i < LIMIT - 1; i++) expect((await login('bob', 'typo-typo-typo')).statusCode).toBe(403);
    expect((await login('bob', USER_PASSWORD)).statusCode).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await login('bob', 'typo-typo-typo')).statusCode).toBe(403);
    expect((await login('bob', USER_PASSWORD)).statusCode).toBe(429);
  });

  it('one address trying many usernames is limited over all of them', async () => {
    for (let i = 0; i < LIMIT; i++)
      expect((await login(`ghost${i}`, 'wrong-wrong-wrong')).statusCode).toBe(403);
    expect((await login('ghost-next', 'wrong-wrong-wrong')).statusCode).toBe(429);
    expect((await login('admin', ADMIN_PASSWORD, '198.51.100.7')).statusCode).toBe(200);
  });
});

describe('login timing', () => {
  it('an unknown user costs one bcrypt compare, as a known one does, and gets the same answer', async () => {
    const cost = async (username: string) => {
      const before = passwordComparesStarted();
      const res = await login(username, 'wrong-wrong-wrong', '198.51.100.20');
      return { compares: passwordComparesStarted() - before, status: res.statusCode, body: res.body };
    };
    const known = await cost('admin');
    const unknown = await cost('nobody-by-this-name');
    expect(known).toEqual({ compares: 1, status: 403, body: '403 Forbidden\n' });
    expect(unknown).toEqual(known);
    // An empty or overlong password takes the same path.
    const before = passwordComparesStarted();
    const empty = await login('admin', '', '198.51.100.21');
    expect(passwordComparesStarted() - before).toBe(1);
    expect(empty.body).toBe('403 Forbidden\n');
  });
});

describe('look-alike usernames', () => {
  const create = (username: string) =>
    t.request(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: {
        what: 'user',
        which: [],
        current_password: ADMIN_PASSWORD,
        data: { username, password: 'a-long-enough-password-1', scope: '/' },
      },
    });

  const refused: [string, number, string][] = [
    ['admın', 400, 'username looks too much like an existing username'],
    [
      'ａｄｍｉｎ',
      400,
      'compatibility characters (such as full-width letters or ligatures): write it as "admin"',
    ],
    ['Admin\u200b', 400, 'invisible or control character (U+200B)'],
    ['ad\u200dmin', 400, 'invisible or control character (U+200D)'],
    ['\u202eadmin', 400, 'invisible or control character (U+202E)'],
    ['admin\u0000', 400, 'invisible or control character (U+0000)'],
    ['аdmin', 400, 'username mixes scripts (Cyrillic, Latin)'],
    ['αdmin', 400, 'username mixes scripts (Greek, Latin)'],
    ['ADMIN', 409, 'a user with this username already exists'],
    ['Admin', 409, 'a user with this username already exists'],
  ];

  it.each(refused)(
    'refuses %j on creation with %i and a clear message, storing nothing',
    async (name, status, message) => {
      const before = await t.ctx.store.users.list();
      const res = await create(name);
      expect(res.statusCode).toBe(status);
      expect(res.body).toContain(message);
      expect(await t.ctx.store.users.list()).toEqual(before);
    },
  );

  it('refuses a rename onto a look-alike, and keeps the old name', async () => {
    const bob = await t.createUser({ username: 'bob' });
    for (const [name, status, message] of refused) {
      const res = await t.updateUser(bob.id, ['username'], { username: name });
      expect(res.statusCode, name).toBe(status);
      expect(res.body).toContain(message);
      expect((await t.ctx.store.users.get(bob.id))!.username).toBe('bob');
    }
  });

  it('accepts names in one script, and finds the account whatever the case or width typed', async () => {
    for (const name of ['Иван', 'Ελένη', '山田太郎', 'José', 'adm1n']) {
      expect((await create(name)).statusCode, name).toBe(201);
    }
    for (const typed of ['ADMIN', 'Admin', 'ａｄｍｉｎ', 'ＡＤＭＩＮ']) {
      expect((await login(typed, ADMIN_PASSWORD, '198.51.100.30')).statusCode, typed).toBe(200);
    }
    expect((await login('иВАН', 'a-long-enough-password-1', '198.51.100.30')).statusCode).toBe(200);
    expect((await login('admın', ADMIN_PASSWORD, '198.51.100.31')).statusCode).toBe(403);
  });

  it('applies the same rule to signup', async () => {
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), signup: true });
    const signup = (username: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username, password: 'a-long-enough-password-1' },
      });
    expect((await signup('admın')).body).toContain('looks too much like an existing username');
    expect((await signup('Admin\u200b')).statusCode).toBe(400);
    expect((await signup('аdmin')).statusCode).toBe(400);
    expect((await signup('ａｄｍｉｎ')).statusCode).toBe(400);
    expect(await t.ctx.store.users.count()).toBe(1);
    expect((await signup('carol')).statusCode).toBe(200);
  });
});

describe('look-alike usernames in the CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-sec-accounts-cli-'));
    fs.mkdirSync(path.join(dir, 'files'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(argv: string[]) {
    let out = '';
    let err = '';
    const io: CliIO = {
      out: (s) => void (out += s),
      err: (s) => void (err += s),
      env: {},
      places: { cwd: dir, home: path.join(dir, 'home'), systemDir: path.join(dir, 'etc') },
      ownsProcess: false,
    };
    return { code: await runCli(argv, io), out, err };
  }

  it('refuses look-alikes in users add and users update', async () => {
    expect((await cli(['config', 'init', '-r', 'files'])).code).toBe(0);
    expect((await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin'])).code).toBe(0);
    const add = await cli(['users', 'add', 'admın', 'another-long-password']);
    expect(add.code).toBe(1);
    expect(add.err).toContain('username looks too much like an existing username');
    expect((await cli(['users', 'add', 'bob', 'another-long-password'])).code).toBe(0);
    const rename = await cli(['users', 'update', 'bob', '--username', 'bob\u200b']);
    expect(rename.code).toBe(1);
    expect(rename.err).toContain('invisible or control character (U+200B)');
    const store = await openStore(path.join(dir, 'filebrowser.db'));
    try {
      expect((await store.users.list()).map((u) => u.username)).toEqual(['admin', 'bob']);
    } finally {
      await store.close();
    }
  });
});

describe('username keys in existing databases', () => {
  it('the migration to NFKC keys keeps accounts whose keys now collide, each signing in by its own spelling', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-sec-accounts-db-'));
    try {
      const file = path.join(dir, 'old.db');
      // A database from before NFKC keys: NFC keys, which kept these two apart.
      const db = new Database(file);
      migrate(db, SCHEMA_BEFORE_NFKC_KEYS);
      const insert = db.prepare(
        `INSERT INTO users (username, username_key, password_hash, profile, updated_at) VALUES (?, ?, '', '{}', 0)`,
      );
      insert.run('admin', 'admin');
      insert.run('ＡＤＭＩＮ', 'ａｄｍｉｎ');
      insert.run('Ｂｏｂ', 'ｂｏｂ');
      db.close();

      const migrated = await openStore(file);
      try {
        expect((await migrated.users.getByUsername('Admin'))!.username).toBe('admin');
        expect((await migrated.users.getByUsername('ＡＤＭＩＮ'))!.username).toBe('ＡＤＭＩＮ');
        // Keys are NFKC now: a full-width spelling is the plain account, and found by plain letters.
        expect((await migrated.users.getByUsername('ａｄｍｉｎ'))!.username).toBe('admin');
        expect((await migrated.users.getByUsername('BOB'))!.username).toBe('Ｂｏｂ');
        // The kept name keeps its key, so the account can still be changed.
        const wide = (await migrated.users.getByUsername('ＡＤＭＩＮ'))!;
        expect((await migrated.users.update({ ...wide, locale: 'de' })).locale).toBe('de');
        await expect(migrated.users.create(userLike('Ａdmin'))).rejects.toThrow(/already exists/);
      } finally {
        await migrated.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cross-site requests', () => {
  it('a state-changing request carrying only the cookie is refused and changes nothing', async () => {
    fs.writeFileSync(path.join(t.root, 'a.txt'), 'keep me');
    const attempts = [
      {
        method: 'PUT',
        url: '/api/users/1',
        payload: { what: 'user', which: ['locale'], data: { id: 1, locale: 'de' } },
      },
      {
        method: 'POST',
        url: '/api/users',
        payload: { what: 'user', which: [], data: { username: 'mallory' } },
      },
      { method: 'DELETE', url: '/api/users/1' },
      { method: 'POST', url: '/api/resources/new.txt' },
      { method: 'DELETE', url: '/api/resources/a.txt' },
      { method: 'PATCH', url: '/api/resources/a.txt?action=rename&destination=/b.txt' },
      { method: 'POST', url: '/api/share/a.txt', payload: {} },
      { method: 'PUT', url: '/api/settings', payload: {} },
      { method: 'POST', url: '/api/logout' },
      { method: 'POST', url: '/api/renew' },
      // Renewal ends the session it is given: even a GET must name the token in X-Auth.
      { method: 'GET', url: '/api/renew' },
    ] as const;
    for (const a of attempts) {
      const res = await t.app.inject({
        ...a,
        headers: { origin: 'https://evil.example' },
        cookies: { auth: t.adminToken },
      });
      expect(res.statusCode, `${a.method} ${a.url}`).toBe(401);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    expect(fs.readFileSync(path.join(t.root, 'a.txt'), 'utf8')).toBe('keep me');
    expect(fs.readdirSync(t.root).sort()).toEqual(['a.txt']);
    expect((await t.ctx.store.users.list()).map((u) => [u.username, u.locale])).toEqual([['admin', 'en']]);
    expect(await t.ctx.store.shares.list()).toEqual([]);
    // The session the cookie carried is alive.
    expect((await t.request(t.adminToken, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
  });

  it('answers no CORS grant to another origin, so a page there cannot send X-Auth', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/users/1',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-auth, content-type',
      },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-headers']).toBeUndefined();
    const read = await t.app.inject({
      method: 'GET',
      url: '/api/users/1',
      headers: { origin: 'https://evil.example' },
      cookies: { auth: t.adminToken },
    });
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    expect(read.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('revocation', () => {
  it('a password change by an admin ends every session of that user', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const tokens = [await t.login('bob'), await t.login('bob')];
    const res = await t.updateUser(bob.id, ['password'], { password: 'a-brand-new-password-42' });
    expect(res.statusCode).toBe(200);
    for (const token of tokens) {
      expect((await t.request(token, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(401);
    }
    expect((await login('bob', USER_PASSWORD, '198.51.100.40')).statusCode).toBe(403);
    expect((await login('bob', 'a-brand-new-password-42', '198.51.100.40')).statusCode).toBe(200);
  });

  it('deleting a user ends its sessions, and a new user with the same name does not inherit them', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const del = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${bob.id}`,
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(del.statusCode).toBe(200);
    expect((await t.request(token, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(401);
    await t.createUser({ username: 'bob' });
    expect((await t.request(token, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(401);
  });

  it('a renamed user is signed out, and the old name no longer signs in', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const res = await t.updateUser(bob.id, ['username'], { username: 'robert' });
    expect(res.statusCode).toBe(200);
    expect((await t.request(token, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(401);
    expect((await login('bob', USER_PASSWORD, '198.51.100.41')).statusCode).toBe(403);
    expect((await login('robert', USER_PASSWORD, '198.51.100.41')).statusCode).toBe(200);
  });
});

function userLike(username: string) {
  return {
    username,
    passwordHash: '',
    scope: '/',
    locale: 'en',
    lockPassword: false,
    viewMode: 'list' as const,
    singleClick: false,
    redirectAfterCopyMove: false,
    perm: {
      admin: false,
      execute: false,
      create: true,
      rename: true,
      modify: true,
      delete: true,
      share: true,
      download: true,
    },
    commands: [],
    sorting: { by: 'name', asc: false },
    rules: [],
    hideDotfiles: false,
    dateFormat: false,
    aceEditorTheme: '',
    uploadsLimit: 5,
  };
}

describe('the bcrypt cost', () => {
  it('is at least 10 in any configured server; a higher one is used for new hashes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-bcrypt-config-'));
    try {
      const places = { cwd: dir, home: dir, systemDir: path.join(dir, 'etc') };
      expect(loadConfig([], {}, places).bcryptCost).toBe(10);
      expect(() => loadConfig(['--bcryptCost', '4'], {}, places)).toThrow(/bcryptCost must be from 10 to 15/);
      expect(() => loadConfig([], { FB_BCRYPT_COST: '9' }, places)).toThrow(
        /bcryptCost must be from 10 to 15/,
      );
      fs.writeFileSync(path.join(dir, '.filebrowser.json'), JSON.stringify({ bcryptCost: 4 }));
      expect(() => loadConfig([], {}, places)).toThrow(ConfigError);
      fs.writeFileSync(path.join(dir, '.filebrowser.json'), JSON.stringify({ bcryptCost: 16 }));
      expect(() => loadConfig([], {}, places)).toThrow(ConfigError);
      fs.writeFileSync(path.join(dir, '.filebrowser.json'), JSON.stringify({ bcryptCost: 11 }));
      expect(loadConfig([], {}, places).bcryptCost).toBe(11);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('of a server is the cost of the hashes it makes for users and share passwords', async () => {
    const strong = await startTestApp({ bcryptCost: 11 });
    try {
      const created = await strong.createUser({ username: 'carol' });
      expect((await strong.ctx.store.users.get(created.id))!.passwordHash).toMatch(/^\$2[aby]\$11\$/);
    } finally {
      await strong.close();
    }
    // the test apps run at bcrypt's lowest cost, which no configuration can ask for
    const alice = await t.createUser({ username: 'alice' });
    expect((await t.ctx.store.users.get(alice.id))!.passwordHash).toMatch(/^\$2[aby]\$04\$/);
  });
});
