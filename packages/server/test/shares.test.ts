import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileAccessFor } from '../src/files/access/access.js';
import { sharesFollowDelete, sharesFollowMove } from '../src/shares/service.js';
import { startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
let bobToken: string;
let bobId: number;
beforeEach(async () => {
  t = await startTestApp();
  await fs.mkdir(path.join(t.root, 'bob', 'docs'), { recursive: true });
  await fs.writeFile(path.join(t.root, 'bob', 'docs', 'a.txt'), 'hello');
  bobId = (await t.createUser({ username: 'bob', scope: '/bob' })).id;
  bobToken = await t.login('bob');
});
afterEach(async () => {
  await t.close();
});

/** `null` sends no body at all. */
const share = (token: string, p: string, body: object | null = {}) =>
  t.request(token, { method: 'POST', url: `/api/share${p}`, ...(body !== null && { payload: body }) });

describe('share management', () => {
  it('creates a permanent link with a 128-bit hash and never shows secrets', async () => {
    const res = await share(bobToken, '/docs/', { password: '  s3cret  ', expires: '', unit: 'hours' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['hash', 'path', 'userID', 'expire', 'hasPassword']);
    expect(body).toMatchObject({ path: '/docs/', userID: bobId, expire: 0, hasPassword: true });
    expect(body.hash).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const list = await t.request(bobToken, { method: 'GET', url: '/api/shares' });
    expect(list.json()).toEqual([body]);
    expect(list.body).not.toContain('$2');
    const forPath = await t.request(bobToken, { method: 'GET', url: '/api/share/docs/' });
    expect(forPath.json()).toEqual([body]);
    expect((await t.request(bobToken, { method: 'GET', url: '/api/share/docs' })).json()).toEqual([]);
  });

  it('computes expiry from the unit, hours by default', async () => {
    const before = Math.floor(Date.now() / 1000);
    const days = (await share(bobToken, '/docs/a.txt', { expires: '2', unit: 'days' })).json();
    expect(days.expire).toBeGreaterThanOrEqual(before + 2 * 86400);
    expect(days.expire).toBeLessThanOrEqual(before + 2 * 86400 + 2);
    const hours = (await share(bobToken, '/docs/a.txt', { expires: '3', unit: 'fortnights' })).json();
    expect(hours.expire - before).toBeGreaterThanOrEqual(3 * 3600);
    expect(hours.expire - before).toBeLessThan(3 * 3600 + 3);
    const numeric = (await share(bobToken, '/docs/a.txt', { expires: 30, unit: 'minutes' })).json();
    expect(numeric.expire - before).toBeGreaterThanOrEqual(1800);
  });

  it('takes every unit, and 0 or empty as permanent', async () => {
    const before = Math.floor(Date.now() / 1000);
    const expiry = async (body: object) => (await share(bobToken, '/docs/a.txt', body)).json().expire;
    expect(await expiry({ expires: '0', unit: 'days' })).toBe(0);
    expect(await expiry({ expires: ' ', unit: 'days' })).toBe(0);
    expect(await expiry({})).toBe(0);
    expect((await expiry({ expires: '90', unit: 'seconds' })) - before).toBeGreaterThanOrEqual(90);
    expect((await expiry({ expires: '90', unit: 'seconds' })) - before).toBeLessThan(93);
    expect((await expiry({ expires: '5', unit: 'minutes' })) - before).toBeGreaterThanOrEqual(300);
    expect((await expiry({ expires: '5', unit: 'minutes' })) - before).toBeLessThan(303);
    expect((await expiry({ expires: '5' })) - before).toBeGreaterThanOrEqual(5 * 3600);
    const longest = await expiry({ expires: '2147483647', unit: 'days' });
    expect(longest - before).toBeGreaterThanOrEqual(2147483647 * 86400);
  });

  it('refuses bad requests with clear messages and stores nothing', async () => {
    const cases: [string, object | null, number, string][] = [
      ['/docs/a.txt', null, 400, 'a JSON body'],
      ['/docs/a.txt', { expires: 'soon' }, 400, 'expires must be a whole number'],
      ['/docs/a.txt', { expires: '-1' }, 400, 'expires must be a whole number'],
      ['/docs/a.txt', { expires: '2147483648' }, 400, 'expires must be a whole number'],
      ['/docs/missing.txt', {}, 404, ''],
      ['/docs/a.txt', { password: 'x'.repeat(100) }, 400, 'too long'],
    ];
    for (const [p, body, status, message] of cases) {
      const res = await share(bobToken, p, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.body).toContain(message);
    }
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });

  it('needs share and download permissions', async () => {
    for (const perm of [{ share: false }, { share: false, download: false }]) {
      const name = `u${Object.keys(perm).length}`;
      const u = await t.createUser({
        username: name,
        scope: '/bob',
        perm: {
          admin: false,
          execute: false,
          create: true,
          rename: true,
          modify: true,
          delete: true,
          download: true,
          ...perm,
        },
      });
      const token = await t.login(u.username);
      expect((await share(token, '/docs/a.txt')).statusCode).toBe(403);
      expect((await t.request(token, { method: 'GET', url: '/api/shares' })).statusCode).toBe(403);
    }
  });

  it('lets only the owner or an admin delete a link', async () => {
    const { hash } = (await share(bobToken, '/docs/a.txt')).json();
    await t.createUser({ username: 'eve', scope: '/bob' });
    const eve = await t.login('eve');
    const denied = await t.request(eve, { method: 'DELETE', url: `/api/share/${hash}` });
    expect(denied.statusCode).toBe(403);
    expect(await t.ctx.store.shares.get(hash)).toBeDefined();
    expect((await t.request(eve, { method: 'DELETE', url: '/api/share/nope' })).statusCode).toBe(404);
    expect((await t.request(t.adminToken, { method: 'DELETE', url: `/api/share/${hash}` })).statusCode).toBe(
      200,
    );
    expect(await t.ctx.store.shares.get(hash)).toBeUndefined();
  });

  it('answers 400 for a delete without a hash and 403 to users who may not share', async () => {
    const empty = await t.request(bobToken, { method: 'DELETE', url: '/api/share/' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toBe('400 Bad Request (the share hash is missing)\n');
    const { hash } = (await share(bobToken, '/docs/a.txt')).json();
    const bob = (await t.ctx.store.users.get(bobId))!;
    await t.ctx.store.users.update({ ...bob, perm: { ...bob.perm, share: false } });
    const denied = await t.request(await t.login('bob'), { method: 'DELETE', url: `/api/share/${hash}` });
    expect(denied.statusCode).toBe(403);
    expect(await t.ctx.store.shares.get(hash)).toBeDefined();
  });

  it('lists only the caller’s own links to a path', async () => {
    await share(bobToken, '/docs/a.txt');
    await t.createUser({ username: 'carol', scope: '/bob' });
    const carol = await t.login('carol');
    expect((await t.request(carol, { method: 'GET', url: '/api/share/docs/a.txt' })).json()).toEqual([]);
    expect((await t.request(carol, { method: 'GET', url: '/api/shares' })).json()).toEqual([]);
  });

  it('shows admins every link and links of other users to the same file', async () => {
    const { hash } = (await share(bobToken, '/docs/a.txt')).json();
    const all = await t.request(t.adminToken, { method: 'GET', url: '/api/shares' });
    expect(all.json().map((s: { hash: string }) => s.hash)).toEqual([hash]);
    const same = await t.request(t.adminToken, { method: 'GET', url: '/api/share/bob/docs/a.txt' });
    expect(same.json().map((s: { hash: string }) => s.hash)).toEqual([hash]);
    expect((await t.request(bobToken, { method: 'GET', url: '/api/shares' })).json()).toHaveLength(1);
  });

  it('drops expired links and never lists them', async () => {
    const s = (await share(bobToken, '/docs/a.txt', { expires: '1', unit: 'seconds' })).json();
    await new Promise((r) => setTimeout(r, 1100));
    expect((await t.request(bobToken, { method: 'GET', url: '/api/shares' })).json()).toEqual([]);
    expect(await t.ctx.store.shares.get(s.hash)).toBeUndefined();
  });

  it('follows moves and renames, and dies with deletes', async () => {
    const file = (await share(bobToken, '/docs/a.txt')).json();
    const folder = (await share(bobToken, '/docs/')).json();
    const adminLink = (await share(t.adminToken, '/bob/docs/a.txt')).json();
    const from = path.join(t.root, 'bob', 'docs');
    const to = path.join(t.root, 'bob', 'papers');
    await fs.rename(from, to);
    const bobAccess = await fileAccessFor(t.ctx, (await t.ctx.store.users.get(bobId))!);
    await sharesFollowMove(
      t.ctx,
      bobAccess,
      (await fs.realpath(path.join(t.root, 'bob'))) + '/docs',
      await fs.realpath(to),
    );
    expect((await t.ctx.store.shares.get(file.hash))!.path).toBe('/papers/a.txt');
    expect((await t.ctx.store.shares.get(folder.hash))!.path).toBe('/papers/');
    expect((await t.ctx.store.shares.get(adminLink.hash))!.path).toBe('/bob/papers/a.txt');
    await fs.rm(to, { recursive: true });
    await sharesFollowDelete(t.ctx, bobAccess, (await fs.realpath(path.join(t.root, 'bob'))) + '/papers');
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });

  it('removes the links of a deleted user', async () => {
    await share(bobToken, '/docs/a.txt');
    await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${bobId}`,
      payload: { current_password: 'admin-password-for-tests' },
    });
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });
});
