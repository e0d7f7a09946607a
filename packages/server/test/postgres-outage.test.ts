import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { isDatabaseAway } from '../src/errors.js';
import { measureSeam } from '../src/files/change/measure.js';
import { quotaLedgerOf } from '../src/files/change/quota.js';
import { openStore, type Store } from '../src/store/index.js';
import type { Job } from '@filebrowser/contract';
import { renameWindow } from './files-helpers.js';
import { startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * PostgreSQL going away while the server runs, and coming back: the server answers 503 with a
 * message meanwhile, and goes on by itself once the database is there again, having lost nothing
 * it had confirmed. The way to the database is cut for real: the server reaches it through a
 * socket relay this test closes (every connection with it) and opens again.
 */
const onPostgres = process.env.FB_TEST_DATABASE === 'postgres';

/** Waits for `check` to hold, asking again at every turn of the event loop (no clock). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

/** A relay from a socket folder of its own to the cluster's socket: `cut` and `restore` it. */
async function relayTo(target: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-pg-relay-'));
  const at = path.join(dir, path.basename(target));
  const open = new Set<net.Socket>();
  let server: net.Server | undefined;
  // Frozen: connections are taken and nothing flows, as with a stopped (SIGSTOP) server.
  let frozen = false;
  const waiting: net.Socket[] = [];
  const watch = (s: net.Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => undefined);
  };
  const link = (client: net.Socket) => {
    const upstream = net.connect(target);
    watch(upstream);
    client.pipe(upstream).pipe(client);
  };
  const restore = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        watch(client);
        if (frozen) waiting.push(client);
        else link(client);
      });
      server.listen(at, resolve);
    });
  const freeze = () => {
    frozen = true;
    for (const s of open) s.pause();
  };
  const thaw = () => {
    frozen = false;
    for (const s of open) s.resume();
    for (const client of waiting.splice(0)) link(client);
  };
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
    for (const s of open) s.destroy();
    await closed;
  };
  await restore();
  return { dir, cut, restore, freeze, thaw };
}

describe.skipIf(!onPostgres)('PostgreSQL going away while serving', () => {
  let a: TestApp | undefined;
  let store: Store | undefined;
  let b: BuiltApp | undefined;
  let relayDir: string | undefined;

  afterEach(async () => {
    await b?.app.close();
    await store?.close();
    await a?.close();
    if (relayDir) await fs.rm(relayDir, { recursive: true, force: true });
  });

  const seam = renameWindow();
  afterEach(() => seam.clear());

  /**
   * A: the app on the database; B: a second app on it through the relay, carol (with `quota`)
   * signed in through B. Answers B's request function as carol, and the relay.
   */
  async function relayedApp(quota = 0) {
    a = await startTestApp();
    await a.createUser({ username: 'carol', scope: '/carol', quota });
    await fs.mkdir(path.join(a.root, 'carol'), { recursive: true });
    // The same database, reached through the relay.
    const direct = new URL(a.ctx.config.database);
    const socketDir = direct.searchParams.get('host')!;
    const relay = await relayTo(path.join(socketDir, '.s.PGSQL.5432'));
    relayDir = relay.dir;
    const relayed = new URL(direct);
    relayed.searchParams.set('host', relay.dir);
    store = await openStore(relayed.toString());
    b = await buildApp({ ...a.ctx.config, database: relayed.toString() }, store, seam.build);
    await b.app.ready();
    const login = await b.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'carol', password: USER_PASSWORD },
    });
    expect(login.statusCode, login.body).toBe(200);
    const token = login.body;
    const as = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: string | object) =>
      b!.app.inject({ method, url, headers: { 'x-auth': token }, ...(payload !== undefined && { payload }) });
    return { relay, as, token, carolId: (await a.ctx.store.users.getByUsername('carol'))!.id };
  }

  it('answers 503 with a message meanwhile, and goes on by itself when it is back, nothing lost', async () => {
    const { relay, as } = await relayedApp();
    expect((await as('POST', '/api/resources/before.txt', 'confirmed')).statusCode).toBe(200);

    await relay.cut();
    const away = await as('GET', '/api/resources/');
    expect(away.statusCode, away.body).toBe(503);
    expect(away.body).toContain('the database cannot be reached');
    expect(Number(away.headers['retry-after'])).toBeGreaterThan(0);
    const health = await b!.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(503);

    await relay.restore();
    await until(async () => (await as('GET', '/api/resources/')).statusCode === 200);
    const listing = await as('GET', '/api/resources/');
    expect(listing.json<{ items: { name: string }[] }>().items.map((i) => i.name)).toEqual(['before.txt']);
    expect((await as('POST', '/api/resources/after.txt', 'after')).statusCode).toBe(200);
    expect(await fs.readFile(path.join(a!.root, 'carol', 'before.txt'), 'utf8')).toBe('confirmed');
  });

  it('answers /health 503 while the database hangs, and 200 once it answers again', async () => {
    const { relay } = await relayedApp();
    relay.freeze();
    const hung = await b!.app.inject({ method: 'GET', url: '/health' });
    expect(hung.statusCode, hung.body).toBe(503);
    relay.thaw();
    await until(async () => (await b!.app.inject({ method: 'GET', url: '/health' })).statusCode === 200);
  });

  it('ends, once it is back, a job that ended while it was away: no job stays running for ever', async () => {
    const { relay, as, carolId } = await relayedApp();
    await fs.writeFile(path.join(a!.root, 'carol', 'src.txt'), 'to copy');
    // The copy lands while the database is away: the job fails, and its end cannot be written.
    seam.next(() => relay.cut());
    const finished = new Promise<Job>((resolve) => b!.ctx.jobs.on('finished', resolve));
    const started = await as('POST', '/api/jobs', {
      action: 'copy',
      items: ['/src.txt'],
      destination: '/dst.txt',
    });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json<Job>().id;
    expect((await finished).state).not.toBe('running');
    await relay.restore();
    // Read through A, straight on the database.
    await until(async () => (await a!.ctx.store.jobs.get(carolId, id))?.job.state !== 'running');
    expect(await a!.ctx.store.jobs.running(carolId)).toEqual([]);
  });

  it('gives back, once it is back, what a write that failed while it was away held of a quota', async () => {
    const { relay, as } = await relayedApp(10_000);
    // The upload is held against the quota, then fails while the database is away.
    seam.next(() => relay.cut());
    const failed = await as('POST', '/api/resources/big.bin', 'x'.repeat(6_000));
    expect(failed.statusCode, failed.body).toBe(503);
    expect(await a!.ctx.store.reservations.total('/carol')).toBe(6_000);
    await relay.restore();
    await until(async () => (await a!.ctx.store.reservations.total('/carol')) === 0);
    await until(
      async () => (await as('POST', '/api/resources/fits.bin', 'y'.repeat(9_000))).statusCode === 200,
    );
  });

  it('counts, once it is back, a file put in place while it went away', async () => {
    const { relay, as } = await relayedApp(10_000);
    expect((await as('GET', '/api/usage/')).json()).toMatchObject({ used: 0 });
    // The file is in place when the database goes: its count cannot be stored now.
    let cut = false;
    quotaLedgerOf(b!.ctx).beforeCount = async () => {
      if (cut) return;
      cut = true;
      await relay.cut();
    };
    await as('POST', '/api/resources/landed.bin', 'x'.repeat(6_000));
    expect(cut).toBe(true);
    expect((await fs.stat(path.join(a!.root, 'carol', 'landed.bin'))).size).toBe(6_000);
    await relay.restore();
    // Held until counted, never neither: the hold goes with the count, in one step.
    await until(async () => {
      const counted = (await a!.ctx.store.scopeUsage.get('default', '/carol'))?.bytes ?? 0;
      const held = await a!.ctx.store.reservations.total('/carol');
      expect(counted + held).toBeGreaterThanOrEqual(6_000);
      return counted === 6_000;
    });
    const over = await as('POST', '/api/resources/more.bin', 'y'.repeat(5_000));
    expect(over.statusCode, over.body).toBe(507);
  });

  it('finishes, when it is asked how far it came, a resumable upload whose last step failed while it was away', async () => {
    const { relay, token } = await relayedApp();
    const tus = (method: 'POST' | 'PATCH' | 'HEAD', headers: Record<string, string>, payload?: string) =>
      b!.app.inject({
        method,
        url: '/api/tus/whole.txt',
        headers: { 'x-auth': token, 'tus-resumable': '1.0.0', ...headers },
        ...(payload !== undefined && { payload }),
      });
    expect((await tus('POST', { 'upload-length': '5' })).statusCode).toBe(201);
    // Every byte is there when the database goes, just before the file takes its place.
    seam.next(() => relay.cut());
    const last = await tus(
      'PATCH',
      { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      'whole',
    );
    expect(last.statusCode, last.body).toBe(503);
    await relay.restore();
    let asked: Awaited<ReturnType<typeof tus>> | undefined;
    await until(async () => (asked = await tus('HEAD', {})).statusCode === 200);
    expect(asked!.headers['upload-offset']).toBe('5');
    expect(await fs.readFile(path.join(a!.root, 'carol', 'whole.txt'), 'utf8')).toBe('whole');
    // Recorded as the upload it finished (the asking alone is not).
    await b!.ctx.audit.flush();
    const records = await a!.ctx.store.audit.list({ action: 'file.upload', pathPrefix: '/whole.txt' }, 10);
    expect(records.map((r) => r.status).sort()).toEqual([200, 503]);
  });

  it('puts back what it was deleting into the trash when its record cannot be written', async () => {
    const { relay, as } = await relayedApp();
    await fs.mkdir(path.join(a!.root, 'carol', 'd'));
    await fs.writeFile(path.join(a!.root, 'carol', 'd', 'kept.txt'), 'kept');
    // It is in the trash, measured there, when the database goes: its record cannot be written.
    measureSeam.step = async (real) => {
      if (!real.includes(`${path.sep}carol${path.sep}`)) await relay.cut();
    };
    const res = await as('DELETE', '/api/resources/d');
    measureSeam.step = undefined;
    expect(res.statusCode, res.body).toBe(503);
    expect(await fs.readFile(path.join(a!.root, 'carol', 'd', 'kept.txt'), 'utf8')).toBe('kept');
    await relay.restore();
    await until(async () => (await as('GET', '/api/trash')).statusCode === 200);
    expect((await as('GET', '/api/trash')).json()).toEqual([]);
  });

  it('keeps running when the database goes while short sections hold their locks, and gives them again', async () => {
    const { relay } = await relayedApp();
    // Sections in every state: holding their lock, releasing it, waiting for it.
    const held = await Promise.all([store!.lockLine.hold('one'), store!.lockLine.hold('two')]);
    const waiting = store!.lockLine.hold('one').then(
      (lock) => lock.release(),
      () => undefined,
    );
    const releasing = held[1]!.release();
    await relay.cut();
    await held[0]!.release();
    await releasing;
    await waiting;
    // One asked for meanwhile fails as the store's queries do: the database is away (503, not 500).
    for (const asked of [store!.lockLine.hold('three'), store!.lockLine.tryHold('four')]) {
      const err = await asked.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isDatabaseAway(err), String(err)).toBe(true);
    }
    await relay.restore();
    // Once it is back, a section takes its lock again (this process still running).
    await until(async () => {
      const lock = await store!.lockLine.hold('one').catch(() => undefined);
      await lock?.release();
      return lock !== undefined;
    });
  });
});
