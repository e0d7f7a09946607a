import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { AuditEntry, AuditPage, NewApiToken, Permissions } from '@filebrowser/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ANONYMOUS_RECORDS_PER_ADDRESS, AUDIT_FIELD_LIMITS, AuditLog } from '../src/audit/log.js';
import { purgeExpiredAudit } from '../src/audit/retention.js';
import { TokenUseThrottle } from '../src/audit/token-use.js';
import { openStore } from '../src/store/index.js';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * The audit log: every state change makes one record, with who, from where, what,
 * which paths and how it ended; administrators list, filter, page and export them.
 */

let t: TestApp;
let alice: string;
let aliceId: number;
let bin: string;
const USER_PERM: Permissions = { ...ALL_PERMISSIONS, admin: false };

beforeAll(async () => {
  bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-bin-'));
  await fs.writeFile(path.join(bin, 'hello'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
  t = await startTestApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` });
  const user = await t.createUser({
    username: 'alice',
    scope: '/alice',
    perm: USER_PERM,
    commands: ['hello'],
  });
  aliceId = user.id;
  alice = await t.login('alice');
});
afterAll(async () => {
  await t.close();
  await fs.rm(bin, { recursive: true, force: true });
});

async function audit(query: Record<string, string> = {}, token = t.adminToken): Promise<AuditPage> {
  const res = await t.request(token, { method: 'GET', url: '/api/audit', query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AuditPage>();
}

/** The newest record of an action (of a user, when given). */
async function last(action: string, user?: string): Promise<AuditEntry> {
  const page = await audit({ action, ...(user !== undefined && { user }), limit: '1' });
  expect(page.items, `a record of ${action}`).toHaveLength(1);
  return page.items[0]!;
}

async function count(action: string, user?: string): Promise<number> {
  return (await audit({ action, ...(user !== undefined && { user }), limit: '1000' })).items.length;
}

const as = (token: string, method: string, url: string, payload?: unknown, headers = {}) =>
  t.request(token, {
    method: method as 'GET',
    url,
    headers,
    ...(payload !== undefined && { payload: payload as string }),
  });

describe('records of each kind', () => {
  it('sign-in success and failure (with the name tried) and sign-out', async () => {
    const before = await count('auth.login');
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'alice', password: 'wrong' },
      remoteAddress: '203.0.113.9',
    });
    expect(wrong.statusCode).toBe(403);
    const failed = await last('auth.login');
    expect(failed).toMatchObject({
      user: 'alice',
      userID: 0,
      address: '203.0.113.9',
      result: 'error',
      status: 403,
    });

    const token = await t.login('alice');
    expect(await last('auth.login')).toMatchObject({
      user: 'alice',
      userID: aliceId,
      result: 'ok',
      status: 200,
    });
    expect(await count('auth.login')).toBe(before + 2);

    expect((await as(token, 'POST', '/api/logout')).statusCode).toBe(200);
    expect(await last('auth.logout')).toMatchObject({ user: 'alice', result: 'ok' });
  });

  it('token creation, use (once per interval) and revocation', async () => {
    const made = await as(alice, 'POST', '/api/tokens', {
      name: 'backup',
      expiresInDays: 0,
      readOnly: false,
      current_password: USER_PASSWORD,
    });
    expect(made.statusCode).toBe(201);
    const token = made.json<NewApiToken>();
    expect(await last('token.create')).toMatchObject({
      user: 'alice',
      detail: `${token.id} backup`,
      result: 'ok',
    });

    const bearer = { authorization: `Bearer ${token.secret}` };
    for (let i = 0; i < 3; i++) {
      expect(
        (await t.app.inject({ method: 'GET', url: '/api/resources/', headers: bearer })).statusCode,
      ).toBe(200);
    }
    const uses = (await audit({ action: 'token.use' })).items.filter((e) => e.detail.startsWith(token.id));
    expect(uses).toHaveLength(1);
    expect(uses[0]).toMatchObject({ user: 'alice', path: '/api/resources/', status: 200 });

    // A write with the token names it in its own record.
    const put = await t.app.inject({
      method: 'POST',
      url: '/api/resources/by-token.txt',
      headers: bearer,
      payload: 'x',
    });
    expect(put.statusCode).toBe(200);
    expect((await last('file.upload', 'alice')).detail).toBe(`token ${token.id}`);

    expect((await as(alice, 'DELETE', `/api/tokens/${token.id}`)).statusCode).toBe(200);
    expect(await last('token.revoke')).toMatchObject({
      user: 'alice',
      detail: `${token.id} backup of alice`,
    });
  });

  it('user creation, change and deletion, and settings changes', async () => {
    const created = await as(t.adminToken, 'POST', '/api/users', {
      what: 'user',
      which: [],
      current_password: ADMIN_PASSWORD,
      data: { username: 'carol', password: 'carol-password-long', scope: '/carol', perm: USER_PERM },
    });
    expect(created.statusCode, created.body).toBe(201);
    const carol = t.ctx.store.users.getByUsername('carol')!;
    expect(await last('user.create')).toMatchObject({ user: 'admin', detail: `user carol (id ${carol.id})` });

    expect((await t.updateUser(carol.id, ['locale'], { locale: 'fr' })).statusCode).toBe(200);
    expect(await last('user.update')).toMatchObject({
      user: 'admin',
      detail: `user carol (id ${carol.id}): locale`,
    });

    const deleted = await as(t.adminToken, 'DELETE', `/api/users/${carol.id}`, {
      current_password: ADMIN_PASSWORD,
    });
    expect(deleted.statusCode).toBe(200);
    expect(await last('user.delete')).toMatchObject({ detail: `user carol (id ${carol.id})`, result: 'ok' });

    expect(
      (await as(t.adminToken, 'PUT', '/api/settings', { signup: false, audit: { retentionDays: 90 } }))
        .statusCode,
    ).toBe(200);
    expect(await last('settings.update')).toMatchObject({ user: 'admin', detail: 'audit, signup' });
  });

  it('create, upload, modify, rename, move, copy and delete, with their paths', async () => {
    expect((await as(alice, 'POST', '/api/resources/docs/')).statusCode).toBe(200);
    expect(await last('file.create', 'alice')).toMatchObject({ path: '/docs/', result: 'ok' });

    expect((await as(alice, 'POST', '/api/resources/docs/a.txt', 'one')).statusCode).toBe(200);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/docs/a.txt', destination: '' });

    expect((await as(alice, 'PUT', '/api/resources/docs/a.txt', 'two')).statusCode).toBe(200);
    expect(await last('file.modify', 'alice')).toMatchObject({ path: '/docs/a.txt' });

    const rename = await as(
      alice,
      'PATCH',
      '/api/resources/docs/a.txt?action=rename&destination=%2Fdocs%2Fb.txt',
    );
    expect(rename.statusCode).toBe(200);
    expect(await last('file.rename', 'alice')).toMatchObject({
      path: '/docs/a.txt',
      destination: '/docs/b.txt',
    });

    const move = await as(alice, 'PATCH', '/api/resources/docs/b.txt?action=rename&destination=%2Fb.txt');
    expect(move.statusCode).toBe(200);
    expect(await last('file.move', 'alice')).toMatchObject({ path: '/docs/b.txt', destination: '/b.txt' });

    // Auto-naming: the record names where the copy really went.
    const copy = await as(
      alice,
      'PATCH',
      '/api/resources/b.txt?action=copy&destination=%2Fb.txt&rename=true',
    );
    expect(copy.statusCode).toBe(200);
    expect(await last('file.copy', 'alice')).toMatchObject({ path: '/b.txt', destination: '/b(1).txt' });

    expect((await as(alice, 'DELETE', '/api/resources/b(1).txt')).statusCode).toBe(204);
    expect(await last('file.delete', 'alice')).toMatchObject({ path: '/b(1).txt', detail: 'to trash' });
  });

  it('a refused change is recorded as an error and changes nothing', async () => {
    const readOnly = await t.createUser({
      username: 'reader',
      scope: '/alice',
      perm: { ...USER_PERM, create: false, delete: false },
    });
    const reader = await t.login('reader');
    const before = await fs.readdir(path.join(t.root, 'alice'));
    const refused = await as(reader, 'POST', '/api/resources/nope.txt', 'x');
    expect(refused.statusCode).toBe(403);
    expect(await last('file.upload', 'reader')).toMatchObject({
      userID: readOnly.id,
      path: '/nope.txt',
      result: 'error',
      status: 403,
    });
    expect(await fs.readdir(path.join(t.root, 'alice'))).toEqual(before);
  });

  it('trash restore and purge', async () => {
    await fs.writeFile(path.join(t.root, 'alice', 'gone.txt'), 'g');
    expect((await as(alice, 'DELETE', '/api/resources/gone.txt')).statusCode).toBe(204);
    const [item] = (await as(alice, 'GET', '/api/trash'))
      .json<{ id: string; path: string }[]>()
      .filter((i) => i.path === '/gone.txt');
    expect((await as(alice, 'POST', `/api/trash/${item!.id}/restore`)).statusCode).toBe(200);
    expect(await last('trash.restore', 'alice')).toMatchObject({
      path: '/gone.txt',
      destination: '/gone.txt',
      detail: item!.id,
    });

    expect((await as(alice, 'DELETE', '/api/resources/gone.txt')).statusCode).toBe(204);
    const [again] = (await as(alice, 'GET', '/api/trash'))
      .json<{ id: string; path: string }[]>()
      .filter((i) => i.path === '/gone.txt');
    expect((await as(alice, 'DELETE', `/api/trash/${again!.id}`)).statusCode).toBe(204);
    expect(await last('trash.purge', 'alice')).toMatchObject({ path: '/gone.txt', result: 'ok' });

    expect((await as(alice, 'DELETE', '/api/trash')).statusCode).toBe(204);
    expect((await last('trash.purge', 'alice')).detail).toMatch(/^emptied: \d+ items$/);

    const missing = await as(alice, 'POST', '/api/trash/abc123/restore');
    expect(missing.statusCode).toBe(404);
    expect(await last('trash.restore', 'alice')).toMatchObject({
      result: 'error',
      status: 404,
      detail: 'abc123',
    });
  });

  it('a restore replacing an entry records that entry’s delete, into the trash or for good', async () => {
    /** Deletes `name` into the trash, puts another file there, and answers the item's id. */
    const takenOver = async (name: string) => {
      await fs.writeFile(path.join(t.root, 'alice', name), 'old');
      expect((await as(alice, 'DELETE', `/api/resources/${name}`)).statusCode).toBe(204);
      await fs.writeFile(path.join(t.root, 'alice', name), 'taking its name');
      const [item] = (await as(alice, 'GET', '/api/trash'))
        .json<{ id: string; path: string }[]>()
        .filter((i) => i.path === `/${name}`);
      return item!.id;
    };
    const restoreOver = async (id: string) => {
      const res = await as(alice, 'POST', `/api/trash/${id}/restore?override=true`);
      expect(res.statusCode, res.body).toBe(200);
    };

    const id = await takenOver('over.txt');
    await restoreOver(id);
    expect(await last('file.delete', 'alice')).toMatchObject({
      path: '/over.txt',
      result: 'ok',
      detail: 'to trash, replaced by a restore',
    });
    expect(await last('trash.restore', 'alice')).toMatchObject({ path: '/over.txt', detail: id });

    const forGood = await takenOver('gone-for-good.txt');
    const settings = t.ctx.store.settings.get();
    t.ctx.store.settings.save({ ...settings, trash: { ...settings.trash, enabled: false } });
    try {
      await restoreOver(forGood);
    } finally {
      t.ctx.store.settings.save(settings);
    }
    expect(await last('file.delete', 'alice')).toMatchObject({
      path: '/gone-for-good.txt',
      detail: 'permanent, replaced by a restore',
    });
  });

  it('tus: one record when the upload completes, not one per chunk', async () => {
    const before = await count('file.upload', 'alice');
    const tus = { 'tus-resumable': '1.0.0' };
    const created = await as(alice, 'POST', '/api/tus/big.bin', undefined, { ...tus, 'upload-length': '6' });
    expect(created.statusCode).toBe(201);
    const chunk = (offset: string, body: string) =>
      as(alice, 'PATCH', '/api/tus/big.bin', body, {
        ...tus,
        'content-type': 'application/offset+octet-stream',
        'upload-offset': offset,
      });
    expect((await chunk('0', 'abc')).statusCode).toBe(204);
    expect(await count('file.upload', 'alice')).toBe(before);
    expect((await chunk('3', 'def')).statusCode).toBe(204);
    expect(await count('file.upload', 'alice')).toBe(before + 1);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/big.bin', result: 'ok' });

    expect(
      (await as(alice, 'POST', '/api/tus/cancel.bin', undefined, { ...tus, 'upload-length': '6' }))
        .statusCode,
    ).toBe(201);
    expect((await as(alice, 'DELETE', '/api/tus/cancel.bin', undefined, tus)).statusCode).toBe(204);
    expect(await last('upload.cancel', 'alice')).toMatchObject({ path: '/cancel.bin' });
  });

  it('share creation, public access and download, deletion', async () => {
    await fs.writeFile(path.join(t.root, 'alice', 'shared.txt'), 'shared');
    const made = await as(alice, 'POST', '/api/share/shared.txt', {});
    expect(made.statusCode).toBe(200);
    const { hash } = made.json<{ hash: string }>();
    expect(await last('share.create', 'alice')).toMatchObject({ path: '/shared.txt', detail: hash });

    const visit = await t.app.inject({
      method: 'GET',
      url: `/api/public/share/${hash}`,
      remoteAddress: '198.51.100.7',
    });
    expect(visit.statusCode).toBe(200);
    expect(await last('share.access')).toMatchObject({
      user: '',
      address: '198.51.100.7',
      detail: hash,
      result: 'ok',
    });
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).statusCode).toBe(200);
    expect(await last('share.download')).toMatchObject({ detail: hash, result: 'ok' });

    expect((await as(alice, 'DELETE', `/api/share/${hash}`)).statusCode).toBe(200);
    expect(await last('share.delete', 'alice')).toMatchObject({ detail: hash });
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).statusCode).toBe(404);
    expect(await last('share.download')).toMatchObject({ detail: hash, result: 'error', status: 404 });
  });

  it('WebDAV writes, with the DAV client’s paths', async () => {
    const basic = {
      authorization: 'Basic ' + Buffer.from(`alice:${USER_PASSWORD}`).toString('base64'),
      host: 'dav.test',
    };
    const davReq = (method: string, url: string, headers = {}, payload?: string) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: { ...basic, ...headers },
        ...(payload !== undefined && { payload }),
      });
    expect((await davReq('MKCOL', '/dav/davdir')).statusCode).toBe(201);
    expect(await last('file.create', 'alice')).toMatchObject({ path: '/davdir', detail: 'dav' });
    expect((await davReq('PUT', '/dav/davdir/x.txt', {}, 'x')).statusCode).toBe(201);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/davdir/x.txt', detail: 'dav' });
    expect((await davReq('PUT', '/dav/davdir/x.txt', {}, 'y')).statusCode).toBe(204);
    expect(await last('file.modify', 'alice')).toMatchObject({ path: '/davdir/x.txt' });
    const moved = await davReq('MOVE', '/dav/davdir/x.txt', { destination: 'http://dav.test/dav/y.txt' });
    expect(moved.statusCode).toBe(201);
    expect(await last('file.move', 'alice')).toMatchObject({ path: '/davdir/x.txt', destination: '/y.txt' });
    expect((await davReq('DELETE', '/dav/y.txt')).statusCode).toBe(204);
    expect(await last('file.delete', 'alice')).toMatchObject({ path: '/y.txt', detail: 'dav' });
    // Reads are not records.
    const before = (await audit({ user: 'alice', limit: '1000' })).items.length;
    expect((await davReq('PROPFIND', '/dav/', { depth: '1' })).statusCode).toBe(207);
    expect((await audit({ user: 'alice', limit: '1000' })).items.length).toBe(before);
  });

  it('runner commands, with their outcome', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/api/command/`, { headers: { 'x-auth': alice } });
      ws.on('open', () => ws.send('hello'));
      ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    expect(lines.join('')).toContain('hello');
    expect(await last('command.run', 'alice')).toMatchObject({ path: '/', result: 'ok', status: 200 });
    expect((await last('command.run', 'alice')).detail).toMatch(/^hello \(/);
  });
});

describe('listing, filters and paging', () => {
  beforeAll(() => {
    // Records at known times, written through the same queue as requests'.
    const base = Date.UTC(2020, 0, 1);
    for (let i = 0; i < 25; i++) {
      t.ctx.audit.record({
        time: base + i * 1000,
        // A user's (records of nobody signed in are throttled per address: audit/log.ts).
        userId: 9999,
        username: 'filter-user',
        address: '192.0.2.1',
        action: 'file.modify',
        path: i % 2 ? `/proj/f${i}.txt` : `/project/f${i}.txt`,
        destination: i === 4 ? '/proj/moved.txt' : '',
        status: 200,
        detail: '',
      });
    }
  });

  it('filters by user, action, path prefix (source or destination) and time range', async () => {
    const mine = await audit({ user: 'filter-user', limit: '1000' });
    expect(mine.items).toHaveLength(25);
    const proj = await audit({ user: 'filter-user', path: '/proj', limit: '1000' });
    // `/proj` is a folder: `/project/...` is not below it, except the one moved into it.
    expect(
      proj.items.map((e) => e.path).every((p) => p.startsWith('/proj/') || p === '/project/f4.txt'),
    ).toBe(true);
    expect(proj.items).toHaveLength(13);
    const base = Date.UTC(2020, 0, 1);
    const range = await audit({ user: 'filter-user', from: String(base + 5000), to: String(base + 10_000) });
    expect(range.items.map((e) => e.time)).toEqual([9, 8, 7, 6, 5].map((s) => base + s * 1000));
    expect((await audit({ user: 'filter-user', action: 'file.delete' })).items).toHaveLength(0);
    expect((await audit({ user: 'nobody-by-this-name' })).items).toHaveLength(0);
  });

  it('pages newest first with a cursor', async () => {
    const seen: number[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await audit({ user: 'filter-user', limit: '10', ...(cursor && { cursor }) });
      seen.push(...page.items.map((e) => e.id));
      cursor = page.next;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(25);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(new Set(seen).size).toBe(25);
  });

  it('refuses bad filters with 400', async () => {
    const queries: Record<string, string>[] = [
      { limit: '0' },
      { limit: '5000' },
      { action: 'file.explode' },
      { from: 'yesterday' },
      { path: 'relative' },
    ];
    for (const query of queries) {
      const res = await t.request(t.adminToken, { method: 'GET', url: '/api/audit', query });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
    }
  });
});

describe('export', () => {
  it('CSV, with cells a spreadsheet would run as formulas defused', async () => {
    for (const name of ['=HYPERLINK("http://x")', '+1', '-2', '@SUM(A1)']) {
      await t.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: name, password: 'nope' },
      });
    }
    const res = await t.request(t.adminToken, {
      method: 'GET',
      url: '/api/audit/export',
      query: { format: 'csv', action: 'auth.login' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="audit-.*\.csv"$/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,time,user,userID,address,action,path,destination,result,status,detail');
    expect(lines.some((l) => l.includes(`"'=HYPERLINK(""http://x"")"`))).toBe(true);
    for (const cell of [",'+1,", ",'-2,", ",'@SUM(A1),"])
      expect(lines.some((l) => l.includes(cell))).toBe(true);
    // No cell of any line starts with a formula character.
    expect(res.body).not.toMatch(/(^|,)[=+\-@]/m);
    expect(lines.length - 1).toBe(await count('auth.login'));
  });

  it('JSON, the same records as the listing, newest first', async () => {
    const res = await t.request(t.adminToken, {
      method: 'GET',
      url: '/api/audit/export',
      query: { format: 'json', user: 'filter-user' },
    });
    expect(res.statusCode).toBe(200);
    const all = res.json<AuditEntry[]>();
    expect(all).toEqual((await audit({ user: 'filter-user', limit: '1000' })).items);
  });
});

describe('who may read it', () => {
  it('a non-administrator is refused both endpoints (403)', async () => {
    expect((await as(alice, 'GET', '/api/audit')).statusCode).toBe(403);
    expect((await as(alice, 'GET', '/api/audit/export?format=csv')).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/audit' })).statusCode).toBe(401);
  });
});

describe('retention', () => {
  it('purges records older than the setting, and none when it is 0', async () => {
    const now = Date.UTC(2030, 5, 1);
    const day = 86_400_000;
    const rec = (time: number) => ({
      time,
      userId: 0,
      username: 'retention-user',
      address: '',
      action: 'file.delete' as const,
      path: '/old',
      destination: '',
      status: 204,
      detail: '',
    });
    t.ctx.audit.record(rec(now - 10 * day));
    t.ctx.audit.record(rec(now - 2 * day));
    t.ctx.audit.flush();
    t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 0 } });
    await purgeExpiredAudit(t.ctx, now);
    expect((await audit({ user: 'retention-user' })).items).toHaveLength(2);
    t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 5 } });
    await purgeExpiredAudit(t.ctx, now);
    expect((await audit({ user: 'retention-user' })).items.map((e) => e.time)).toEqual([now - 2 * day]);
    t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 90 } });
  });

  it('the setting is in the global settings, 90 days by default, checked', async () => {
    const got = (await as(t.adminToken, 'GET', '/api/settings')).json<{ audit: { retentionDays: number } }>();
    expect(got.audit).toEqual({ retentionDays: 90 });
    expect(
      (await as(t.adminToken, 'PUT', '/api/settings', { audit: { retentionDays: -1 } })).statusCode,
    ).toBe(400);
    expect(t.ctx.store.settings.get().audit.retentionDays).toBe(90);
  });
});

describe('requests nobody signed in for', () => {
  /** Every record, oldest first, straight from the store (the listing would page). */
  const all = (app: TestApp) => {
    app.ctx.audit.flush();
    return app.ctx.store.audit.list({}, 100_000).reverse();
  };
  const bytes = (records: ReturnType<typeof all>) =>
    records.reduce((n, r) => n + Object.values(r).reduce<number>((m, v) => m + String(v).length, 0), 0);
  const basic = (user: string, secret: string) =>
    'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64');
  // A 15 KB path with line breaks, as the flood on the running server sent.
  const longPath = '/dav/' + 'a%0ab%0d'.repeat(2000) + '.txt';

  it('leaves no record of a request refused before any credential was offered', async () => {
    const other = await startTestApp();
    try {
      const before = all(other).length;
      for (let i = 0; i < 200; i++) {
        const res = await other.app.inject({
          method: 'PUT',
          url: longPath,
          payload: 'x',
          remoteAddress: '198.51.100.20',
        });
        expect(res.statusCode).toBe(401);
      }
      for (const [method, url] of [
        ['POST', '/api/resources/x.txt'],
        ['GET', '/api/users'],
        ['DELETE', '/api/trash'],
        ['POST', '/api/tus/a.txt'],
        ['DELETE', '/api/users/1'],
      ] as const) {
        const res = await other.app.inject({ method, url, remoteAddress: '198.51.100.20' });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
      }
      expect(all(other).slice(before)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('records a flood of sign-in attempts as a bounded number of records and bytes, then one summary per address', async () => {
    const other = await startTestApp();
    try {
      const before = all(other).length;
      const flood = [
        ...Array.from({ length: 1000 }, () => ({
          method: 'PUT' as const,
          url: longPath,
          headers: { authorization: basic('ghost%0a' + 'x'.repeat(5000), 'wrong') },
        })),
        ...Array.from({ length: 1000 }, () => ({
          method: 'GET' as const,
          url: '/api/resources/',
          headers: { authorization: `Bearer fbt_${'0'.repeat(16)}_${'A'.repeat(43)}` },
        })),
        ...Array.from({ length: 1000 }, () => ({
          method: 'POST' as const,
          url: '/api/login',
          payload: { username: 'ghost\n' + 'y'.repeat(5000), password: 'wrong' },
        })),
      ];
      for (const opts of flood) {
        const res = await other.app.inject({ ...opts, remoteAddress: '198.51.100.30' });
        expect([401, 403, 429]).toContain(res.statusCode);
      }
      const during = all(other).slice(before);
      expect(during.length).toBeLessThanOrEqual(ANONYMOUS_RECORDS_PER_ADDRESS);
      expect(bytes(during)).toBeLessThan(ANONYMOUS_RECORDS_PER_ADDRESS * 2 * 1024);
      // The rest is told in one record when the minute ends (here: when the server closes).
      await other.app.close();
      const after = other.ctx.store.audit.list({}, 100_000).reverse().slice(before);
      const summaries = after.slice(during.length);
      expect(summaries).toHaveLength(1);
      expect(summaries[0]).toMatchObject({ address: '198.51.100.30', action: 'auth.login' });
      expect(summaries[0]!.detail).toBe(
        `${flood.length - during.length} more failed sign-ins from 198.51.100.30 in the last minute`,
      );
    } finally {
      await other.close();
    }
  });

  it('keeps every field within its bound and free of control characters', async () => {
    const other = await startTestApp();
    try {
      const before = all(other).length;
      await other.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: 'x\u0000y\u001b[31m\r\nz' + 'n'.repeat(10_000), password: 'wrong' },
        remoteAddress: '198.51.100.40',
      });
      // A signed-in user's request: its path is long and has line breaks too.
      await other.request(other.adminToken, { method: 'DELETE', url: '/api/resources' + longPath.slice(4) });
      const records = all(other).slice(before);
      expect(records.map((r) => r.action)).toEqual(['auth.login', 'file.delete']);
      for (const r of records) {
        for (const [field, value] of Object.entries(r)) {
          if (typeof value !== 'string') continue;
          // eslint-disable-next-line no-control-regex
          expect(value, field).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
          expect(value.length, field).toBeLessThanOrEqual(
            AUDIT_FIELD_LIMITS[field as keyof typeof AUDIT_FIELD_LIMITS],
          );
        }
      }
      expect(records[0]!.username).toMatch(/^x\uFFFDy\uFFFD\[31m\uFFFD\uFFFDzn+…$/);
      expect(records[1]!.path.startsWith('/a\uFFFDb\uFFFD')).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('records failed WebDAV Basic and API token sign-ins as it records failed logins', async () => {
    const other = await startTestApp();
    try {
      const before = all(other).length;
      const from = '198.51.100.50';
      const token = `fbt_${'1'.repeat(16)}_${'B'.repeat(43)}`;
      const answers = [
        await other.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: 'admin', password: 'wrong' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'PROPFIND',
          url: '/dav/',
          headers: { authorization: basic('admin', 'wrong'), depth: '0' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'PROPFIND',
          url: '/dav/',
          headers: { authorization: basic('admin', token), depth: '0' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'GET',
          url: '/api/resources/',
          headers: { authorization: `Bearer ${token}` },
          remoteAddress: from,
        }),
      ];
      expect(answers.map((a) => a.statusCode)).toEqual([403, 401, 401, 401]);
      expect(
        all(other)
          .slice(before)
          .map(({ action, username, userId, address, status, detail }) => ({
            action,
            username,
            userId,
            address,
            status,
            detail,
          })),
      ).toEqual([
        { action: 'auth.login', username: 'admin', userId: 0, address: from, status: 403, detail: '' },
        { action: 'auth.login', username: 'admin', userId: 0, address: from, status: 401, detail: 'webdav' },
        {
          action: 'auth.login',
          username: 'admin',
          userId: 0,
          address: from,
          status: 401,
          detail: `webdav, API token ${'1'.repeat(16)}`,
        },
        {
          action: 'auth.login',
          username: `fbt_${'1'.repeat(16)}`,
          userId: 0,
          address: from,
          status: 401,
          detail: `API token ${'1'.repeat(16)}`,
        },
      ]);
    } finally {
      await other.close();
    }
  });
});

describe('the writer', () => {
  it('writes a full batch on the next turn of the event loop, not per record', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { batchSize: 3, flushMs: 3_600_000 });
      const rec = (n: number) => ({ ...sample, path: `/${n}` });
      log.record(rec(1));
      log.record(rec(2));
      expect(store.audit.list({}, 10)).toHaveLength(0);
      log.record(rec(3));
      expect(store.audit.list({}, 10)).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.audit.list({}, 10).map((r) => r.path)).toEqual(['/3', '/2', '/1']);
      log.record(rec(4));
      log.close();
      expect(store.audit.list({}, 10)).toHaveLength(4);
    } finally {
      store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('holds records while the database refuses them, up to its bound, dropping the oldest', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { batchSize: 100, flushMs: 3_600_000, maxQueued: 3 });
      store.db.exec('ALTER TABLE audit_log RENAME TO audit_log_away');
      for (let n = 1; n <= 5; n++) log.record({ ...sample, path: `/${n}` });
      log.flush();
      store.db.exec('ALTER TABLE audit_log_away RENAME TO audit_log');
      log.flush();
      expect(store.audit.list({}, 10).map((r) => r.path)).toEqual(['/5', '/4', '/3']);
      log.close();
    } finally {
      store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('writes what is queued when the app closes (the shutdown path)', async () => {
    const other = await startTestApp();
    try {
      await other.request(other.adminToken, { method: 'POST', url: '/api/resources/closing/' });
      await other.app.close();
      expect(other.ctx.store.audit.list({ action: 'file.create' }, 10)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('writes at most 151 records a minute of requests nobody signed in for, from however many addresses', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { flushMs: 3_600_000 });
      const attempt = (address: string) => ({
        ...sample,
        userId: 0,
        username: 'x',
        address,
        status: 403,
        action: 'auth.login' as const,
      });
      const minute = 1_000_000;
      for (let a = 0; a < 500; a++) {
        for (let n = 0; n < 20; n++) log.record(attempt(`10.0.${a >> 8}.${a & 255}`), minute);
      }
      // The next minute's first record brings the summaries of the one before.
      log.record(attempt('192.0.2.1'), minute + 60_000);
      log.flush();
      const records = store.audit.list({}, 100_000).reverse();
      expect(records).toHaveLength(100 + 50 + 1 + 1);
      expect(records.slice(0, 100).every((r) => r.detail === '')).toBe(true);
      const summaries = records.slice(100, 151);
      expect(summaries[0]!.detail).toBe('10 more failed sign-ins from 10.0.0.0 in the last minute');
      expect(summaries[10]!.detail).toBe('20 more failed sign-ins from 10.0.0.10 in the last minute');
      expect(summaries[50]).toMatchObject({
        address: '',
        detail: '9000 more requests nobody signed in for, from 450 other addresses in the last minute',
      });
      expect(records[151]).toMatchObject({ address: '192.0.2.1', detail: '' });
      log.close();
    } finally {
      store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('throttles token uses per token', () => {
    const throttle = new TokenUseThrottle(1000);
    expect(throttle.due('a', 0)).toBe(true);
    expect(throttle.due('a', 999)).toBe(false);
    expect(throttle.due('b', 999)).toBe(true);
    expect(throttle.due('a', 1000)).toBe(true);
  });
});

const sample = {
  time: 1,
  userId: 1,
  username: 'u',
  address: '',
  action: 'file.modify' as const,
  path: '/',
  destination: '',
  status: 200,
  detail: '',
};
