import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ApiToken, NewApiToken, Permissions } from '@filebrowser/contract';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { verifyApiTokenSecret } from '../src/auth/api-tokens.js';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * Personal API tokens: made and revoked by a signed-in user, shown once, kept hashed,
 * accepted as `Authorization: Bearer` on the whole API, and always cut to what their user may do
 * now, less what the token withholds (read-only, one folder).
 */

let t: TestApp;
let aliceId: number;
let alice: string;
let home: string;

const USER_PERM: Permissions = { ...ALL_PERMISSIONS, admin: false };

beforeAll(async () => {
  t = await startTestApp();
  const user = await t.createUser({ username: 'alice', scope: '/alice', perm: USER_PERM });
  aliceId = user.id;
  alice = await t.login('alice');
  home = path.join(t.root, 'alice');
  await fs.mkdir(path.join(home, 'docs', 'inner'), { recursive: true });
  await fs.writeFile(path.join(home, 'docs', 'report.txt'), 'report');
  await fs.writeFile(path.join(home, 'docs', 'inner', 'deep.txt'), 'deep');
  await fs.writeFile(path.join(home, 'secret.txt'), 'outside the folder');
  await fs.writeFile(path.join(home, 'notes.txt'), 'notes');
  await fs.mkdir(path.join(t.root, 'bob'));
  await fs.writeFile(path.join(t.root, 'bob', 'bob.txt'), 'bob');
});
afterAll(() => t.close());

interface TokenWish {
  name?: string;
  expiresInDays?: number;
  readOnly?: boolean;
  folder?: string;
}

async function createToken(
  session: string,
  wish: TokenWish = {},
  password = USER_PASSWORD,
): Promise<NewApiToken> {
  const res = await t.request(session, {
    method: 'POST',
    url: '/api/tokens',
    payload: { name: 'script', expiresInDays: 0, readOnly: false, ...wish, current_password: password },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<NewApiToken>();
}

/** A request with `Authorization: Bearer`. */
function bearer(secret: string, opts: InjectOptions) {
  return t.app.inject({ ...opts, headers: { authorization: `Bearer ${secret}`, ...opts.headers } });
}

async function listTokens(session: string): Promise<ApiToken[]> {
  const res = await t.request(session, { method: 'GET', url: '/api/tokens' });
  expect(res.statusCode).toBe(200);
  return res.json<ApiToken[]>();
}

async function setPerm(userId: number, perm: Permissions): Promise<void> {
  const res = await t.request(t.adminToken, {
    method: 'PUT',
    url: `/api/users/${userId}`,
    payload: { what: 'user', which: ['perm'], current_password: ADMIN_PASSWORD, data: { id: userId, perm } },
  });
  expect(res.statusCode, res.body).toBe(200);
}

describe('managing tokens', () => {
  it('creates, lists and revokes tokens; the secret is shown once and kept only as a hash', async () => {
    const made = await createToken(alice, { name: 'backup job', expiresInDays: 30, readOnly: true });
    expect(made.secret).toMatch(/^fbt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(made.secret.slice(4, 20)).toBe(made.id);
    expect(made).toMatchObject({
      name: 'backup job',
      userID: aliceId,
      readOnly: true,
      folder: '',
      lastUsed: 0,
    });
    expect(made.expires - made.created).toBe(30 * 86_400);

    const listed = await listTokens(alice);
    const mine = listed.find((x) => x.id === made.id)!;
    expect(mine).toEqual({ ...made, secret: undefined, folderMissing: false });
    const listing = await t.request(alice, { method: 'GET', url: '/api/tokens' });
    expect(listing.body).not.toContain(made.secret.slice(21));

    // At rest: the SHA-256 of the secret part, never the secret, in the database (its files and
    // log on SQLite; every row of every table on PostgreSQL).
    const secretPart = made.secret.slice(21);
    let stored: Buffer;
    if (t.ctx.store.dialect === 'sqlite') {
      await sql`PRAGMA wal_checkpoint(FULL)`.execute(t.ctx.store.sql);
      stored = Buffer.concat(
        await Promise.all(
          [t.dbFile, `${t.dbFile}-wal`].map((f) => fs.readFile(f).catch(() => Buffer.alloc(0))),
        ),
      );
    } else {
      const tables = await sql<{ tablename: string }>`
        SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`.execute(t.ctx.store.sql);
      const rows = await Promise.all(
        tables.rows.map((r) => sql`SELECT * FROM ${sql.table(r.tablename)}`.execute(t.ctx.store.sql)),
      );
      stored = Buffer.from(JSON.stringify(rows.map((r) => r.rows)));
    }
    expect(stored.includes(Buffer.from(secretPart))).toBe(false);
    expect(stored.includes(Buffer.from(made.secret))).toBe(false);
    const hash = crypto.createHash('sha256').update(secretPart).digest('hex');
    expect(stored.includes(Buffer.from(hash))).toBe(true);

    const revoked = await t.request(alice, { method: 'DELETE', url: `/api/tokens/${made.id}` });
    expect(revoked.statusCode).toBe(200);
    expect((await listTokens(alice)).some((x) => x.id === made.id)).toBe(false);
    const again = await t.request(alice, { method: 'DELETE', url: `/api/tokens/${made.id}` });
    expect(again.statusCode).toBe(404);
  });

  it('refuses a wrong current password, a bad name, expiry or folder, and stores nothing', async () => {
    const before = await t.ctx.store.apiTokens.countByUser(aliceId);
    const attempt = (payload: Record<string, unknown>) =>
      t.request(alice, {
        method: 'POST',
        url: '/api/tokens',
        payload: {
          name: 'x',
          expiresInDays: 0,
          readOnly: false,
          current_password: USER_PASSWORD,
          ...payload,
        },
      });
    const wrong = await attempt({ current_password: 'not my password at all' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('current password is incorrect');
    expect((await attempt({ current_password: undefined })).statusCode).toBe(400);
    expect((await attempt({ name: '' })).statusCode).toBe(400);
    expect((await attempt({ name: '   ' })).statusCode).toBe(400);
    expect((await attempt({ name: 'a\u0000b' })).statusCode).toBe(400);
    expect((await attempt({ expiresInDays: -1 })).statusCode).toBe(400);
    expect((await attempt({ expiresInDays: 1.5 })).statusCode).toBe(400);
    expect((await attempt({ expiresInDays: 100_000 })).statusCode).toBe(400);
    expect((await attempt({ readOnly: 'yes' })).statusCode).toBe(400);
    const missing = await attempt({ folder: '/no-such-folder' });
    expect([400, 404]).toContain(missing.statusCode);
    expect((await attempt({ folder: '/notes.txt' })).statusCode).toBe(400);
    expect((await attempt({ folder: '/../bob' })).statusCode).toBe(400);
    expect(await t.ctx.store.apiTokens.countByUser(aliceId)).toBe(before);
  });

  it('counts a wrong current password as a guess at the password: 429 past the login limit, everywhere it is asked', async () => {
    const small = await startTestApp({ loginRateLimit: 3 });
    try {
      const carol = await small.createUser({ username: 'carol', scope: '/carol' });
      const session = await small.login('carol');
      const guess = (url: string, method: 'POST' | 'PUT', payload: Record<string, unknown>) =>
        small.request(session, { method, url, payload, remoteAddress: '198.51.100.9' });
      const token = (password: string) =>
        guess('/api/tokens', 'POST', {
          name: 'x',
          expiresInDays: 0,
          readOnly: false,
          current_password: password,
        });
      const newPassword = (password: string) =>
        guess(`/api/users/${carol.id}`, 'PUT', {
          what: 'user',
          which: ['password'],
          data: { id: carol.id, password: 'another long password' },
          current_password: password,
        });
      expect((await token('wrong 1')).statusCode).toBe(400);
      expect((await newPassword('wrong 2')).statusCode).toBe(400);
      expect((await token('wrong 3')).statusCode).toBe(400);
      // The limit is reached: even the right password waits now, by either way.
      const refused = await newPassword(USER_PASSWORD);
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await token(USER_PASSWORD)).statusCode).toBe(429);
      expect(await small.ctx.store.apiTokens.countByUser(carol.id)).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('lets an administrator list and revoke anyone’s tokens, and nobody else', async () => {
    const made = await createToken(alice, { name: 'for the admin to see' });
    const listed = await t.request(t.adminToken, { method: 'GET', url: `/api/users/${aliceId}/tokens` });
    expect(listed.statusCode).toBe(200);
    expect(listed.json<ApiToken[]>().map((x) => x.name)).toContain('for the admin to see');
    expect(listed.body).not.toContain(made.secret);
    const unknownUser = await t.request(t.adminToken, { method: 'GET', url: '/api/users/999/tokens' });
    expect(unknownUser.statusCode).toBe(404);

    const adminsOwn = await createToken(t.adminToken, { name: 'admin script' }, ADMIN_PASSWORD);
    expect((await t.request(alice, { method: 'GET', url: '/api/users/1/tokens' })).statusCode).toBe(403);
    // Someone else's token is not found for a non-administrator, and stays.
    const foreign = await t.request(alice, { method: 'DELETE', url: `/api/tokens/${adminsOwn.id}` });
    expect(foreign.statusCode).toBe(404);
    expect(await t.ctx.store.apiTokens.get(adminsOwn.id)).toBeDefined();

    const revoked = await t.request(t.adminToken, { method: 'DELETE', url: `/api/tokens/${made.id}` });
    expect(revoked.statusCode).toBe(200);
    expect(await t.ctx.store.apiTokens.get(made.id)).toBeUndefined();
    const gone = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
    expect(gone.statusCode).toBe(401);
  });

  it('cannot be done with a token: no token mints, lists or revokes tokens', async () => {
    const made = await createToken(t.adminToken, { name: 'full admin token' }, ADMIN_PASSWORD);
    const other = await createToken(alice, { name: 'victim' });
    for (const [method, url, payload] of [
      ['GET', '/api/tokens', undefined],
      [
        'POST',
        '/api/tokens',
        { name: 'minted', expiresInDays: 0, readOnly: false, current_password: ADMIN_PASSWORD },
      ],
      ['DELETE', `/api/tokens/${other.id}`, undefined],
      ['GET', `/api/users/${aliceId}/tokens`, undefined],
    ] as const) {
      const res = await bearer(made.secret, { method, url, ...(payload && { payload }) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.body).toContain('API tokens cannot be used here');
    }
    expect(await t.ctx.store.apiTokens.get(other.id)).toBeDefined();
    expect((await t.ctx.store.apiTokens.listByUser(1)).map((x) => x.name)).not.toContain('minted');
    // Nor does a token end or renew a session.
    expect((await bearer(made.secret, { method: 'POST', url: '/api/logout' })).statusCode).toBe(403);
  });
});

describe('using tokens', () => {
  it('is accepted as a Bearer token on listings and downloads, and records when it was used', async () => {
    const made = await createToken(alice, { name: 'reader', readOnly: true });
    const listing = await bearer(made.secret, { method: 'GET', url: '/api/resources/docs/' });
    expect(listing.statusCode).toBe(200);
    expect(
      listing
        .json<{ items: { name: string }[] }>()
        .items.map((i) => i.name)
        .sort(),
    ).toEqual(['inner', 'report.txt']);
    const raw = await bearer(made.secret, { method: 'GET', url: '/api/raw/docs/report.txt' });
    expect(raw.statusCode).toBe(200);
    expect(raw.body).toBe('report');
    // The scheme's case does not matter; another scheme is not a token.
    const lower = await t.app.inject({
      method: 'GET',
      url: '/api/raw/notes.txt',
      headers: { authorization: `bearer ${made.secret}` },
    });
    expect(lower.statusCode).toBe(200);
    const basic = await t.app.inject({
      method: 'GET',
      url: '/api/raw/notes.txt',
      headers: { authorization: `Basic ${Buffer.from(`alice:${made.secret}`).toString('base64')}` },
    });
    expect(basic.statusCode).toBe(401);

    const used = (await listTokens(alice)).find((x) => x.id === made.id)!;
    expect(used.lastUsed).toBeGreaterThan(0);
  });

  it('refuses a wrong, malformed or revoked token with 401', async () => {
    const made = await createToken(alice, { name: 'short-lived' });
    const wrongSecret = made.secret.slice(0, -4) + (made.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const secret of [wrongSecret, 'fbt_', 'fbt_nothex', 'not-a-token', made.secret + 'x']) {
      const res = await bearer(secret, { method: 'GET', url: '/api/resources/', remoteAddress: '10.1.0.1' });
      expect(res.statusCode, secret).toBe(401);
    }
    await t.request(alice, { method: 'DELETE', url: `/api/tokens/${made.id}` });
    const res = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
    expect(res.statusCode).toBe(401);
  });

  it('refuses an expired token', async () => {
    const made = await createToken(alice, { name: 'expiring', expiresInDays: 1 });
    expect((await bearer(made.secret, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(200);
    // A day later, as the check sees it.
    const stored = (await t.ctx.store.apiTokens.get(made.id))!;
    const reservation = { succeeded: () => Promise.resolve() };
    await expect(verifyApiTokenSecret(t.ctx, made.secret, reservation, stored.expiresAt)).rejects.toThrow(
      /expired/,
    );
    // And over HTTP, with the expiry in the database already past.
    await t.ctx.store.apiTokens.delete(made.id, stored.userId);
    await t.ctx.store.apiTokens.create({ ...stored, expiresAt: Date.now() - 1 });
    const res = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('expired');
  });

  it('refuses every write of a read-only token with 403 naming the token, and changes nothing', async () => {
    const made = await createToken(alice, { name: 'ro-token', readOnly: true });
    const cases: InjectOptions[] = [
      { method: 'POST', url: '/api/resources/new.txt', payload: 'x' },
      { method: 'POST', url: '/api/resources/newdir/' },
      { method: 'PUT', url: '/api/resources/notes.txt', payload: 'changed' },
      { method: 'DELETE', url: '/api/resources/notes.txt' },
      { method: 'PATCH', url: '/api/resources/notes.txt?action=rename&destination=/renamed.txt' },
      { method: 'PATCH', url: '/api/resources/notes.txt?action=copy&destination=/copy.txt' },
      { method: 'POST', url: '/api/share/notes.txt', payload: {} },
      { method: 'POST', url: '/api/tus/up.txt', headers: { 'tus-resumable': '1.0.0', 'upload-length': '1' } },
    ];
    for (const c of cases) {
      const res = await bearer(made.secret, c);
      expect(res.statusCode, `${c.method} ${c.url}`).toBe(403);
      expect(res.body, `${c.method} ${c.url}`).toContain('the API token “ro-token” is read-only');
    }
    expect(await fs.readFile(path.join(home, 'notes.txt'), 'utf8')).toBe('notes');
    expect((await fs.readdir(home)).sort()).toEqual(['docs', 'notes.txt', 'secret.txt']);
    expect(await t.ctx.store.shares.list(aliceId)).toEqual([]);
  });

  it('refuses a password change and user administration to a read-only token', async () => {
    const own = await createToken(alice, { name: 'ro-own', readOnly: true });
    const change = await bearer(own.secret, {
      method: 'PUT',
      url: `/api/users/${aliceId}`,
      payload: {
        what: 'user',
        which: ['password'],
        current_password: USER_PASSWORD,
        data: { id: aliceId, password: 'a brand new password here' },
      },
    });
    expect(change.statusCode).toBe(403);
    expect(change.body).toContain('read-only');
    expect(await t.login('alice')).toBeTruthy();

    const admin = await createToken(t.adminToken, { name: 'ro-admin', readOnly: true }, ADMIN_PASSWORD);
    const users = await bearer(admin.secret, { method: 'GET', url: '/api/users' });
    expect(users.statusCode).toBe(403);
    expect(users.body).toContain('the API token “ro-admin” is read-only');
    const settings = await bearer(admin.secret, { method: 'GET', url: '/api/settings' });
    expect(settings.statusCode).toBe(403);
    // A read-write administrator token does administer.
    const rw = await createToken(t.adminToken, { name: 'rw-admin' }, ADMIN_PASSWORD);
    expect((await bearer(rw.secret, { method: 'GET', url: '/api/users' })).statusCode).toBe(200);
    // But what a user may reach needs the administrator's password, which a token never carries.
    for (const [which, data] of [
      [['rules'], { rules: [{ regex: false, allow: true, path: '/secret', regexp: null }] }],
      [['quota'], { quota: 10 ** 12 }],
    ] as const) {
      const res = await bearer(rw.secret, {
        method: 'PUT',
        url: `/api/users/${aliceId}`,
        payload: { what: 'user', which, data: { id: aliceId, ...data } },
      });
      expect(res.statusCode, which.join()).toBe(400);
      expect(res.body).toContain('current password is incorrect');
    }
    const stored = (await t.ctx.store.users.get(aliceId))!;
    expect(stored.rules).toEqual([]);
    expect(stored.quota).toBe(0);
  });

  it('lets a read-write token write', async () => {
    const made = await createToken(alice, { name: 'writer' });
    const res = await bearer(made.secret, {
      method: 'POST',
      url: '/api/resources/written.txt',
      payload: 'hi',
    });
    expect(res.statusCode).toBe(200);
    expect(await fs.readFile(path.join(home, 'written.txt'), 'utf8')).toBe('hi');
    await fs.rm(path.join(home, 'written.txt'));
  });

  it('follows the user’s current permissions: a permission taken away is gone from the token too', async () => {
    const made = await createToken(alice, { name: 'follows-user' });
    await setPerm(aliceId, { ...USER_PERM, create: false });
    try {
      const res = await bearer(made.secret, { method: 'POST', url: '/api/resources/late.txt', payload: 'x' });
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('this needs the create permission');
      await expect(fs.stat(path.join(home, 'late.txt'))).rejects.toThrow();
    } finally {
      await setPerm(aliceId, USER_PERM);
    }
    alice = await t.login('alice');
  });

  it('confines a folder token to its folder: escapes answer 403 or 404', async () => {
    await fs.symlink('../secret.txt', path.join(home, 'docs', 'link-out'));
    await fs.symlink('../../bob', path.join(home, 'docs', 'link-bob'));
    try {
      const made = await createToken(alice, { name: 'docs only', folder: '/docs' });
      expect(made.folder).toBe('/docs');
      const listing = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
      expect(listing.statusCode).toBe(200);
      // Links that lead out of the folder are not even listed.
      expect(
        listing
          .json<{ items: { name: string }[] }>()
          .items.map((i) => i.name)
          .sort(),
      ).toEqual(['inner', 'report.txt']);
      const inside = await bearer(made.secret, { method: 'GET', url: '/api/raw/inner/deep.txt' });
      expect(inside.body).toBe('deep');

      for (const url of [
        '/api/raw/secret.txt',
        '/api/raw/link-out',
        '/api/raw/link-bob/bob.txt',
        '/api/raw/..%2fsecret.txt',
        '/api/raw/%2e%2e/secret.txt',
        '/api/raw/..%5csecret.txt',
        '/api/resources/link-bob/',
      ]) {
        const res = await bearer(made.secret, { method: 'GET', url });
        if (res.statusCode === 301) {
          // The app cleans dot segments by redirecting; the cleaned path is inside the folder.
          const follow = await bearer(made.secret, { method: 'GET', url: res.headers.location! });
          expect([400, 403, 404], url).toContain(follow.statusCode);
          expect(follow.body).not.toContain('outside the folder');
          continue;
        }
        expect([400, 403, 404], `${url}: ${res.statusCode}`).toContain(res.statusCode);
        expect(res.body).not.toContain('outside the folder');
      }
      // Writes outside are refused as well, and a folder token neither shares nor administers.
      const move = await bearer(made.secret, {
        method: 'PATCH',
        url: '/api/resources/report.txt?action=rename&destination=/../report.txt',
      });
      expect(move.statusCode).not.toBe(200);
      expect(await fs.readFile(path.join(home, 'docs', 'report.txt'), 'utf8')).toBe('report');
      const share = await bearer(made.secret, { method: 'POST', url: '/api/share/report.txt', payload: {} });
      expect(share.statusCode).toBe(403);
      expect(share.body).toContain('the API token “docs only” is limited to one folder');
      const shares = await bearer(made.secret, { method: 'GET', url: '/api/shares' });
      expect(shares.statusCode).toBe(403);

      // A folder no longer in reach refuses everything rather than serving what replaced it.
      await fs.rename(path.join(home, 'docs'), path.join(home, 'docs-moved'));
      try {
        const gone = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
        expect(gone.statusCode).toBe(404);
        expect((await listTokens(alice)).find((x) => x.id === made.id)?.folder).toBe('/docs');
      } finally {
        await fs.rename(path.join(home, 'docs-moved'), path.join(home, 'docs'));
      }
    } finally {
      await fs.rm(path.join(home, 'docs', 'link-out'));
      await fs.rm(path.join(home, 'docs', 'link-bob'));
    }
  });

  it('applies the user’s rules inside a folder token, as written against the whole scope', async () => {
    const made = await createToken(alice, { name: 'rules', folder: '/docs' });
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${aliceId}`,
      payload: {
        what: 'user',
        which: ['rules'],
        current_password: ADMIN_PASSWORD,
        data: { id: aliceId, rules: [{ regex: false, allow: false, path: '/docs/inner', regexp: null }] },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    try {
      const denied = await bearer(made.secret, { method: 'GET', url: '/api/raw/inner/deep.txt' });
      expect(denied.statusCode).toBe(403);
      const listing = await bearer(made.secret, { method: 'GET', url: '/api/resources/' });
      expect(listing.json<{ items: { name: string }[] }>().items.map((i) => i.name)).not.toContain('inner');
    } finally {
      await t.request(t.adminToken, {
        method: 'PUT',
        url: `/api/users/${aliceId}`,
        payload: {
          what: 'user',
          which: ['rules'],
          current_password: ADMIN_PASSWORD,
          data: { id: aliceId, rules: [] },
        },
      });
      alice = await t.login('alice');
    }
  });

  it('dies with its user', async () => {
    const carol = await t.createUser({ username: 'carol', scope: '/carol', perm: USER_PERM });
    const session = await t.login('carol');
    const made = await createToken(session, { name: 'carol script' });
    expect((await bearer(made.secret, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(200);
    const res = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${carol.id}`,
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(res.statusCode).toBe(200);
    expect(await t.ctx.store.apiTokens.listByUser(carol.id)).toEqual([]);
    expect(await t.ctx.store.apiTokens.get(made.id)).toBeUndefined();
    expect((await bearer(made.secret, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(401);
  });

  it('throttles bad tokens per address with 429 and Retry-After, without keeping out other addresses', async () => {
    const made = await createToken(alice, { name: 'good one' });
    const address = '10.9.9.9';
    const wrong = `fbt_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    const limit = t.ctx.config.loginRateLimit;
    for (let i = 0; i < limit; i++) {
      const res = await bearer(wrong, { method: 'GET', url: '/api/resources/', remoteAddress: address });
      expect(res.statusCode).toBe(401);
    }
    const throttled = await bearer(wrong, { method: 'GET', url: '/api/resources/', remoteAddress: address });
    expect(throttled.statusCode).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(throttled.body).toContain('too many invalid API tokens');
    // That address waits, even with a good token; another address is served.
    const sameAddress = await bearer(made.secret, {
      method: 'GET',
      url: '/api/resources/',
      remoteAddress: address,
    });
    expect(sameAddress.statusCode).toBe(429);
    const elsewhere = await bearer(made.secret, {
      method: 'GET',
      url: '/api/resources/',
      remoteAddress: '10.9.9.10',
    });
    expect(elsewhere.statusCode).toBe(200);
    // Good tokens are never counted against their address.
    for (let i = 0; i < limit + 2; i++) {
      const res = await bearer(made.secret, {
        method: 'GET',
        url: '/api/resources/',
        remoteAddress: '10.9.9.11',
      });
      expect(res.statusCode).toBe(200);
    }
  });
});
