import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { stagingName } from '../src/files/access/staging-names.js';
import { DEAD_AFTER_MS, InstanceRegistry } from '../src/instances.js';
import { openStore, type Store } from '../src/store/index.js';
import { startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * Several instances on one PostgreSQL database and one served folder (docs/scale-out.md): two
 * real apps in this process, as two servers behind a proxy would be, each with its own store.
 */
const onPostgres = process.env.FB_TEST_DATABASE === 'postgres';

/** Waits for `check` to hold, asking again at every turn of the event loop (no clock). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

describe.skipIf(!onPostgres)('two instances on one database and one folder', () => {
  let a: TestApp;
  let bStore: Store;
  let b: BuiltApp;

  beforeEach(async () => {
    a = await startTestApp({ loginRateLimit: 3 });
    bStore = await openStore(a.ctx.config.database);
    b = await buildApp(a.ctx.config, bStore);
    await b.app.ready();
  });

  afterEach(async () => {
    await b.app.close();
    await bStore.close();
    await a.close();
  });

  const viaB = (token: string, url: string, method: 'GET' | 'POST' = 'GET') =>
    b.app.inject({ method, url, headers: { 'x-auth': token } });

  it('are registered apart, and each names itself in /health', async () => {
    const ids = (await bStore.instances.list()).map((i) => i.id).sort();
    expect(ids).toEqual([a.ctx.store.instance.id, bStore.instance.id].sort());
    expect(a.ctx.store.instance.id).not.toBe(bStore.instance.id);
    const health = await b.app.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toEqual({ status: 'OK', instance: bStore.instance.id });
  });

  it('share sessions: one made on one works on the other, a logout on one ends it on both', async () => {
    await a.createUser({ username: 'carol', scope: '/carol' });
    const token = await a.login('carol');
    expect((await viaB(token, '/api/resources/')).statusCode).toBe(200);
    expect((await a.request(token, { method: 'POST', url: '/api/logout' })).statusCode).toBe(200);
    expect((await viaB(token, '/api/resources/')).statusCode).toBe(401);
    const again = await b.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'carol', password: USER_PASSWORD },
    });
    expect(again.statusCode).toBe(200);
    expect((await a.request(again.body, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(200);
  });

  it('count wrong passwords together: N instances do not allow N times the guesses', async () => {
    const wrong = (app: TestApp['app']) =>
      app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: 'admin', password: 'wrong' },
        remoteAddress: '198.51.100.7',
      });
    expect((await wrong(a.app)).statusCode).toBe(403);
    expect((await wrong(b.app)).statusCode).toBe(403);
    expect((await wrong(a.app)).statusCode).toBe(403);
    const fourth = await wrong(b.app);
    expect(fourth.statusCode).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('put a setting saved on one in force on the other', async () => {
    expect(bStore.settings.get().signup).toBe(false);
    const saved = await a.request(a.adminToken, {
      method: 'PUT',
      url: '/api/settings',
      payload: { signup: true },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    await until(() => bStore.settings.get().signup);
    const signup = await b.app.inject({
      method: 'POST',
      url: '/api/signup',
      payload: { username: 'newcomer', password: 'a long enough password' },
    });
    expect(signup.statusCode, signup.body).toBe(200);
  });

  it('run timed work of one name once at a time across them', async () => {
    let inside: unknown = 'not asked';
    const ran = await a.ctx.store.exclusively('sweep', async () => {
      inside = await bStore.exclusively('sweep', () => Promise.resolve('ran twice'));
      return 'ran';
    });
    expect(ran).toBe('ran');
    expect(inside).toBeUndefined();
    expect(await bStore.exclusively('sweep', () => Promise.resolve('ran'))).toBe('ran');
  });

  it('settle what a dead instance left in progress, and leave a live one’s alone', async () => {
    const dead = { id: 'gone', host: 'h', pid: 1, startedAt: 1, seenAt: Date.now() - DEAD_AFTER_MS - 1 };
    await bStore.instances.register(dead);
    const leftBy = async (instance: string, name: string) => {
      const file = stagingName(name);
      await fs.writeFile(path.join(a.root, file), 'half');
      await sql`INSERT INTO staging_files (folder, name, created_at, instance) VALUES (${a.root}, ${file}, ${Date.now()}, ${instance})`.execute(
        bStore.sql,
      );
      return file;
    };
    const deadFile = await leftBy('gone', 'a.txt');
    const liveFile = await leftBy(a.ctx.store.instance.id, 'b.txt');

    await new InstanceRegistry(b.ctx).beat();
    const names = await fs.readdir(a.root);
    expect(names).not.toContain(deadFile);
    expect(names).toContain(liveFile);
    expect((await bStore.instances.list()).map((i) => i.id)).not.toContain('gone');
    expect((await bStore.staging.orphaned([])).map((r) => r.name)).toEqual([liveFile]);
  });

  it('see a change made through the other at once: listings are checked against the folder', async () => {
    await fs.mkdir(path.join(a.root, 'shared'));
    const before = await viaB(a.adminToken, '/api/resources/shared/');
    expect(before.json<{ items: unknown[] }>().items).toEqual([]);
    const made = await a.request(a.adminToken, {
      method: 'POST',
      url: '/api/resources/shared/new.txt',
      payload: 'x',
    });
    expect(made.statusCode).toBe(200);
    const after = await viaB(a.adminToken, '/api/resources/shared/');
    expect(after.json<{ items: Array<{ name: string }> }>().items.map((i) => i.name)).toEqual(['new.txt']);
  });
});

describe.skipIf(onPostgres)('one instance on a SQLite file', () => {
  it('is the only one registered: those an earlier process left are gone at start', async () => {
    const t = await startTestApp();
    try {
      expect((await t.ctx.store.instances.list()).map((i) => i.id)).toEqual([t.ctx.store.instance.id]);
      // A process killed on this file left its row (one server process holds a SQLite file).
      await t.ctx.store.instances.register({
        id: 'earlier',
        host: 'h',
        pid: 1,
        startedAt: 1,
        seenAt: Date.now(),
      });
      await new InstanceRegistry(t.ctx).start();
      const ids = (await t.ctx.store.instances.list()).map((i) => i.id);
      expect(ids).toEqual([t.ctx.store.instance.id]);
      expect(t.ctx.store.instance.shared).toBe(false);
    } finally {
      await t.close();
    }
  });
});
