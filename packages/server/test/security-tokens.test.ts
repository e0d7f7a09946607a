import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { signToken } from '../src/auth/tokens.js';
import type { TrashItem } from '@filebrowser/contract';
import type { InjectOptions } from 'fastify';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/*
 * Class: session tokens that outlive what they were issued for. File Browser sent the token in
 * the URL (`?auth=`, GHSA-rmwh-g367-mj4x), where logs and Referer headers keep it, and with proxy
 * authentication let a token pass after its expiry (GHSA-v3jv-rmh2-635j). Here a token travels
 * only in X-Auth or the auth cookie, and needs both its session and an unexpired `exp`.
 */

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

/** The admin's token re-signed with the same key and session, `seconds` from now. */
async function adminTokenExpiring(seconds: number): Promise<string> {
  const { sid } = decodeJwt(t.adminToken) as { sid: string };
  const admin = (await t.ctx.store.users.getByUsername('admin'))!;
  return signToken(admin, sid, t.ctx.store.settings.get().key, seconds);
}

describe('session tokens', () => {
  it('are never read from the URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/users/1?auth=${t.adminToken}` });
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('401 Unauthorized\n');
  });

  it('are refused once expired, though their session is alive, with every auth method', async () => {
    const live = await adminTokenExpiring(60);
    const expired = await adminTokenExpiring(-1);
    for (const method of ['json', 'proxy']) {
      const s = t.ctx.store.settings.get();
      await t.ctx.store.settings.save({
        ...s,
        authMethod: method,
        auther: { ...s.auther, header: 'X-Remote-User' },
      });
      const ok = await t.app.inject({ method: 'GET', url: '/api/users/1', headers: { 'x-auth': live } });
      expect(ok.statusCode, method).toBe(200);
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/users/1',
        headers: { 'x-auth': expired, 'x-remote-user': 'admin' },
      });
      expect(res.statusCode, method).toBe(401);
      expect(
        (await t.app.inject({ method: 'POST', url: '/api/renew', headers: { 'x-auth': expired } }))
          .statusCode,
      ).toBe(401);
    }
  });
});

/*
 * Class: a leaked database (as when a command runner walk printed the signing key and the live
 * session ids from the database's -wal, and a token forged from them was accepted).
 * The database holds the key that signs tokens, but nothing a token must carry to be accepted.
 */
describe('a copy of the database', () => {
  it('forges nothing: no session, API token or share token made from what it holds is accepted', async () => {
    const as = (token: string) => ({ 'x-auth': token });
    // What the database holds while the admin is signed in, has an API token and a share
    // password was entered.
    await fs.mkdir(path.join(t.root, 'docs'));
    await fs.writeFile(path.join(t.root, 'docs/a.txt'), 'shared\n');
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/tokens',
      headers: as(t.adminToken),
      payload: { name: 'script', expiresInDays: 0, readOnly: false, current_password: ADMIN_PASSWORD },
    });
    expect(made.statusCode).toBe(201);
    const shared = await t.app.inject({
      method: 'POST',
      url: '/api/share/docs/',
      headers: as(t.adminToken),
      payload: { password: 'a share password, long enough' },
    });
    const { hash } = shared.json<{ hash: string }>();
    const earned = await t.app.inject({
      method: 'GET',
      url: `/api/public/share/${hash}`,
      headers: { 'x-share-password': encodeURIComponent('a share password, long enough') },
    });
    const shareToken = earned.json<{ token: string }>().token;
    expect(shareToken).toBeTruthy();

    // The attacker's copy: on SQLite the files, as any file tool reads them (the -wal holds the
    // recent rows); on PostgreSQL every row, as a dump holds them.
    type Row = Record<string, string | number>;
    let read: (table: string) => Promise<Row[]>;
    let done = async () => undefined;
    if (t.ctx.store.dialect === 'sqlite') {
      const copy = path.join(path.dirname(t.dbFile), 'copy.db');
      await fs.copyFile(t.dbFile, copy);
      await fs.copyFile(`${t.dbFile}-wal`, `${copy}-wal`);
      const leaked = new Database(copy);
      read = async (table) => leaked.prepare(`SELECT * FROM ${table}`).all() as Row[];
      done = async () => void leaked.close();
    } else {
      read = async (table) =>
        (await sql<Row>`SELECT * FROM ${sql.table(table)}`.execute(t.ctx.store.sql)).rows;
    }
    const settings = JSON.parse(String((await read('config')).find((r) => r.key === 'settings')!.value)) as {
      key: string;
    };
    const sessions = await read('sessions');
    const apiTokens = await read('api_tokens');
    const shares = await read('shares');
    const grants = await read('share_grants');
    await done();
    expect(sessions.length).toBeGreaterThan(0);
    expect(apiTokens).toHaveLength(1);
    expect(grants).toHaveLength(1);

    // Every value a session row holds, as the session id of an admin token signed with the key.
    const admin = (await t.ctx.store.users.getByUsername('admin'))!;
    for (const row of sessions) {
      for (const value of Object.values(row)) {
        const forged = await signToken(admin, String(value), settings.key, 3600);
        const res = await t.app.inject({ method: 'GET', url: '/api/users', headers: as(forged) });
        expect(res.statusCode, `sid ${String(value)}`).toBe(401);
      }
    }
    // The API token's id with what is stored of its secret.
    for (const row of apiTokens) {
      const secret = Buffer.from(String(row.secret_hash), 'hex').toString('base64url');
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/users',
        headers: { authorization: `Bearer fbt_${String(row.id)}_${secret}` },
      });
      expect(res.statusCode).toBe(401);
    }
    // Share tokens: File Browser's HMAC over the link and its password hash, and the stored hashes.
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const forgedShareTokens = [
      ...shares.map(
        (sh) =>
          `${exp}.${crypto
            .createHmac('sha256', Buffer.from(settings.key, 'base64'))
            .update(`share:${String(sh.hash)}:${String(sh.password_hash)}:${exp}`)
            .digest('base64url')}`,
      ),
      ...grants.map((g) => `${exp}.${String(g.token_hash)}`),
      ...grants.map((g) => String(g.token_hash)),
    ];
    for (const token of forgedShareTokens) {
      const res = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/a.txt?token=${token}` });
      expect(res.statusCode, token).toBe(401);
    }

    // What the server handed out still works: the copy was the only thing missing.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/users', headers: as(t.adminToken) })).statusCode,
    ).toBe(200);
    const dl = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/a.txt?token=${shareToken}` });
    expect(dl.statusCode).toBe(200);
  });
});

/*
 * Class: a token limited to one folder reaching beyond it through a route that keeps records of
 * its own rather than files (the trash, the jobs): each lists and acts on only what lies in the
 * token's folder, and names it as the token sees it.
 */
describe('a whole-account API token of an administrator', () => {
  it('reads the settings but never changes them: hooks, sign-up and retention stay as they are', async () => {
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/tokens',
      headers: { 'x-auth': t.adminToken },
      payload: { name: 'script', expiresInDays: 0, readOnly: false, current_password: ADMIN_PASSWORD },
    });
    expect(made.statusCode, made.body).toBe(201);
    const bearer = { authorization: `Bearer ${made.json<{ secret: string }>().secret}` };
    const before = await t.app.inject({ method: 'GET', url: '/api/settings', headers: bearer });
    expect(before.statusCode, before.body).toBe(200);
    for (const payload of [
      { commands: { after_upload: ['touch /tmp/by-token'] } },
      { signup: true, defaults: { scope: '/' } },
      { audit: { retentionDays: 1 } },
    ]) {
      const res = await t.app.inject({ method: 'PUT', url: '/api/settings', headers: bearer, payload });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.body).toContain('API tokens cannot be used here');
    }
    const after = await t.app.inject({ method: 'GET', url: '/api/settings', headers: bearer });
    expect(after.json()).toEqual(before.json());
  });
});

describe('a folder API token', () => {
  let session: string;
  let folderSecret: string;
  const bearer = (opts: InjectOptions) =>
    t.app.inject({ ...opts, headers: { authorization: `Bearer ${folderSecret}`, ...opts.headers } });
  const home = () => path.join(t.root, 'alice');

  beforeEach(async () => {
    await t.createUser({ username: 'alice', scope: '/alice', perm: { ...ALL_PERMISSIONS, admin: false } });
    await fs.mkdir(path.join(home(), 'docs'), { recursive: true });
    await fs.writeFile(path.join(home(), 'docs', 'inside.txt'), 'inside');
    await fs.writeFile(path.join(home(), 'outside-secret.txt'), 'outside');
    session = await t.login('alice');
    const made = await t.request(session, {
      method: 'POST',
      url: '/api/tokens',
      payload: {
        name: 'docs',
        expiresInDays: 0,
        readOnly: false,
        folder: '/docs',
        current_password: USER_PASSWORD,
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    folderSecret = made.json<{ secret: string }>().secret;
  });

  it('sees, restores and purges only the trash items deleted inside its folder', async () => {
    for (const p of ['/docs/inside.txt', '/outside-secret.txt']) {
      const res = await t.request(session, { method: 'DELETE', url: `/api/resources${p}` });
      expect(res.statusCode, res.body).toBe(204);
    }
    const items = await t.ctx.store.trash.list((await t.ctx.store.users.getByUsername('alice'))!.id);
    const inside = items.find((i) => i.path === '/docs/inside.txt')!;
    const outside = items.find((i) => i.path === '/outside-secret.txt')!;

    const listed = await bearer({ method: 'GET', url: '/api/trash' });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.body).not.toContain('outside-secret');
    expect(listed.json<TrashItem[]>().map((i) => [i.id, i.path])).toEqual([[inside.id, '/inside.txt']]);

    // What lies outside is not found, and stays where it is.
    for (const opts of [
      { method: 'POST', url: `/api/trash/${outside.id}/restore` },
      { method: 'DELETE', url: `/api/trash/${outside.id}` },
    ] as const) {
      const res = await bearer(opts);
      expect(res.statusCode, `${opts.method} ${opts.url}: ${res.body}`).toBe(404);
    }
    const emptied = await bearer({ method: 'DELETE', url: '/api/trash' });
    expect(emptied.statusCode, emptied.body).toBe(204);
    expect(await t.ctx.store.trash.get(outside.id)).toBeDefined();
    expect(await t.ctx.store.trash.get(inside.id)).toBeUndefined();
    const all = await t.request(session, { method: 'GET', url: '/api/trash' });
    expect(all.json<TrashItem[]>().map((i) => i.id)).toEqual([outside.id]);
    await expect(fs.stat(path.join(home(), 'outside-secret.txt'))).rejects.toThrow();

    // What the token deletes, it finds in its trash and puts back inside its folder.
    await fs.writeFile(path.join(home(), 'docs', 'again.txt'), 'again');
    expect((await bearer({ method: 'DELETE', url: '/api/resources/again.txt' })).statusCode).toBe(204);
    const mine = (await bearer({ method: 'GET', url: '/api/trash' })).json<TrashItem[]>();
    expect(mine.map((i) => i.path)).toEqual(['/again.txt']);
    // The session, and the audit log, name it from the whole scope (a red-team finding).
    const seen = (await t.request(session, { method: 'GET', url: '/api/trash' })).json<TrashItem[]>();
    expect(seen.find((i) => i.id === mine[0]!.id)?.path).toBe('/docs/again.txt');
    await t.ctx.audit.flush();
    const deletes = await t.ctx.store.audit.list({ action: 'file.delete' }, 10);
    expect(deletes.filter((r) => r.detail.includes('token')).map((r) => r.path)).toEqual(['/docs/again.txt']);
    const back = await bearer({ method: 'POST', url: `/api/trash/${mine[0]!.id}/restore` });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ path: '/again.txt' });
    expect(await fs.readFile(path.join(home(), 'docs', 'again.txt'), 'utf8')).toBe('again');
  });

  it('reaches only the resumable uploads of its own folder, though their paths read alike', async () => {
    const tus = (headers: Record<string, string>) => ({ 'tus-resumable': '1.0.0', ...headers });
    // The session's upload to /outside-up.txt and the token's to /outside-up.txt (in its folder)
    // share a URL path, not a target.
    const started = await t.request(session, {
      method: 'POST',
      url: '/api/tus/outside-up.txt',
      headers: tus({ 'upload-length': '5' }),
    });
    expect(started.statusCode, started.body).toBe(201);
    const first = await t.request(session, {
      method: 'PATCH',
      url: '/api/tus/outside-up.txt',
      headers: tus({ 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      payload: 'ab',
    });
    expect(first.statusCode, first.body).toBe(204);
    for (const opts of [
      { method: 'HEAD', url: '/api/tus/outside-up.txt', headers: tus({}) },
      {
        method: 'PATCH',
        url: '/api/tus/outside-up.txt',
        headers: tus({ 'upload-offset': '2', 'content-type': 'application/offset+octet-stream' }),
        payload: 'cde',
      },
      { method: 'DELETE', url: '/api/tus/outside-up.txt', headers: tus({}) },
    ] as const) {
      const res = await bearer(opts);
      expect(res.statusCode, `${opts.method} ${opts.url}: ${res.body}`).toBe(404);
    }
    await expect(fs.stat(path.join(home(), 'docs', 'outside-up.txt'))).rejects.toThrow();
    const status = await t.request(session, {
      method: 'HEAD',
      url: '/api/tus/outside-up.txt',
      headers: tus({}),
    });
    expect(status.statusCode).toBe(200);
    expect(status.headers['upload-offset']).toBe('2');

    // The token's own upload to the same URL path is its own, and lands in its folder.
    const mine = await bearer({
      method: 'POST',
      url: '/api/tus/outside-up.txt',
      headers: tus({ 'upload-length': '2' }),
    });
    expect(mine.statusCode, mine.body).toBe(201);
    const done = await bearer({
      method: 'PATCH',
      url: '/api/tus/outside-up.txt',
      headers: tus({ 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      payload: 'ok',
    });
    expect(done.statusCode, done.body).toBe(204);
    expect(await fs.readFile(path.join(home(), 'docs', 'outside-up.txt'), 'utf8')).toBe('ok');
    const still = await t.request(session, {
      method: 'HEAD',
      url: '/api/tus/outside-up.txt',
      headers: tus({}),
    });
    expect(still.headers['upload-offset']).toBe('2');
  });

  it('sees and cancels only the jobs it could have started: those of its own folder', async () => {
    await fs.writeFile(path.join(home(), 'outside-job.txt'), 'x');
    const started = await t.request(session, {
      method: 'POST',
      url: '/api/jobs',
      payload: { action: 'copy', items: ['/outside-job.txt'], destination: '/outside-copy-folder/' },
    });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = started.json<{ id: string }>();
    const finished = await t.request(session, { method: 'DELETE', url: `/api/jobs/${id}` });
    expect(finished.statusCode, finished.body).toBe(200);

    for (const opts of [
      { method: 'GET', url: `/api/jobs/${id}` },
      { method: 'DELETE', url: `/api/jobs/${id}` },
    ] as const) {
      const res = await bearer(opts);
      expect(res.statusCode, `${opts.method} ${opts.url}: ${res.body}`).toBe(404);
      expect(res.body).not.toContain('outside-job');
    }
    const running = await bearer({ method: 'GET', url: '/api/jobs' });
    expect(running.body).not.toContain('outside-job');
    // The session still follows its own job.
    expect((await t.request(session, { method: 'GET', url: `/api/jobs/${id}` })).statusCode).toBe(200);
  });
});
