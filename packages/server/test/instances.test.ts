import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { countersFor, GuessThrottle } from '../src/auth/rate-limit.js';
import { stagingName } from '../src/files/access/staging-names.js';
import { quotaLedgerOf } from '../src/files/change/quota.js';
import { BEAT_MS, DEAD_AFTER_MS, InstanceRegistry } from '../src/instances.js';
import { openStore, type Store } from '../src/store/index.js';
import { uploadHolder } from '../src/store/reservations.js';
import type { Job } from '@filebrowser/contract';
import { renameWindow } from './files-helpers.js';
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

/** A running job as the instance `instance` would have recorded it (one that may since have died). */
async function leftJob(store: Store, instance: string, userId: number, id: string): Promise<void> {
  await sql`INSERT INTO jobs (user_id, id, instance, action, state, items, destination, started_at)
    VALUES (${userId}, ${id}, ${instance}, 'copy', 'running', '["/a"]', '/b', ${Date.now()})`.execute(
    store.sql,
  );
}

describe.skipIf(!onPostgres)('two instances on one database and one folder', () => {
  let a: TestApp;
  let bStore: Store;
  let b: BuiltApp;
  const seam = renameWindow();

  beforeEach(async () => {
    a = await startTestApp({ loginRateLimit: 3, uploadsPendingLimit: 5 }, seam.build);
    bStore = await openStore(a.ctx.config.database);
    b = await buildApp(a.ctx.config, bStore);
    await b.app.ready();
  });

  afterEach(async () => {
    seam.clear();
    await b.app.close();
    await bStore.close();
    await a.close();
  });

  /** carol (scope /carol unless told), her folder made, signed in through A: her token. */
  async function carol(user: { scope?: string; quota?: number } = {}): Promise<string> {
    await a.createUser({ username: 'carol', scope: '/carol', ...user });
    await fs.mkdir(path.join(a.root, 'carol'), { recursive: true });
    return a.login('carol');
  }

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

  it('forget right guesses through both at once: neither the address nor the name keeps any counted', async () => {
    // Sign-ins in flight are counted, and a right one forgets its own: a guess counted by the
    // other instance between reading and deleting that count was lost, uncounted, for the window
    // (the load's sign-ins from one address met the limit).
    const shared = (store: Store) => new GuessThrottle(4, 60_000, 'slow down', countersFor(store, 'test'));
    const [viaA, viaB2] = [shared(a.ctx.store), shared(bStore)];
    for (let round = 0; round < 120; round++) {
      await Promise.all(
        [viaA, viaB2, viaA, viaB2].map(async (throttle) => {
          const guess = await throttle.reserve('203.0.113.9', 'admin');
          await guess.succeeded();
        }),
      );
    }
    const left = await sql<{ count: number }>`SELECT count FROM attempts WHERE kind LIKE 'test:%'`.execute(
      bStore.sql,
    );
    expect(left.rows.map((r) => Number(r.count)).filter((n) => n > 0)).toEqual([]);
  });

  describe('a resumable upload', () => {
    const OCTETS = 'application/offset+octet-stream';
    const tus = (
      app: TestApp['app'],
      token: string,
      method: 'POST' | 'PATCH' | 'HEAD',
      headers = {},
      payload?: unknown,
    ) =>
      app.inject({
        method,
        url: '/api/tus/carol/report.bin',
        headers: { 'x-auth': token, 'tus-resumable': '1.0.0', ...headers },
        ...(payload !== undefined && { payload: payload as string }),
      });
    const patch = (app: TestApp['app'], token: string, offset: number, body: unknown) =>
      tus(app, token, 'PATCH', { 'content-type': OCTETS, 'upload-offset': String(offset) }, body);
    /** A PATCH at offset 0 through A on a real socket, its body held open after `first`. */
    async function slowPatch(token: string, first: string) {
      const base = await a.app.listen({ host: '127.0.0.1', port: 0 });
      const req = http.request(`${base}/api/tus/carol/report.bin`, {
        method: 'PATCH',
        headers: {
          'x-auth': token,
          'tus-resumable': '1.0.0',
          'content-type': OCTETS,
          'upload-offset': '0',
          'transfer-encoding': 'chunked',
        },
      });
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        req.on('error', reject);
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
      });
      req.write(first);
      return { body: req, answer };
    }
    const uploadKey = async () => `filebrowser:upload:${(await bStore.uploads.all())[0]!.id}`;
    /** The rows of pg_locks of an upload's lock (lock-line.ts): the low half of its key. */
    const holdsUploadLock = (key: string) =>
      sql`locktype = 'advisory' AND objsubid = 1 AND objid::bigint = (hashtextextended(${key}, 0) & 4294967295)`;
    /** Whether some instance holds the upload's lock, asked of the database. */
    async function held(): Promise<boolean> {
      const rows = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM pg_locks WHERE ${holdsUploadLock(await uploadKey())}`.execute(bStore.sql);
      return Number(rows.rows[0]?.n) > 0;
    }
    const offsetOn = async (app: TestApp['app'], token: string) =>
      Number((await tus(app, token, 'HEAD')).headers['upload-offset']);

    it('begun on one goes on and ends through the other', async () => {
      const token = await carol({ scope: '/' });
      expect((await tus(a.app, token, 'POST', { 'upload-length': '10' })).statusCode).toBe(201);
      expect((await patch(a.app, token, 0, 'first')).statusCode).toBe(204);
      expect(await offsetOn(b.app, token)).toBe(5);
      const last = await patch(b.app, token, 5, 'last.');
      expect(last.statusCode, last.body).toBe(204);
      expect(await fs.readFile(path.join(a.root, 'carol', 'report.bin'), 'utf8')).toBe('firstlast.');
      expect(await bStore.uploads.all()).toEqual([]);
    });

    it('finished through the other frees what it held against the quota where it began', async () => {
      const token = await carol({ quota: 12 });
      const tusAt = (
        app: TestApp['app'],
        name: string,
        method: 'POST' | 'PATCH',
        headers = {},
        payload?: string,
      ) =>
        app.inject({
          method,
          url: `/api/tus/${name}`,
          headers: { 'x-auth': token, 'tus-resumable': '1.0.0', ...headers },
          ...(payload !== undefined && { payload }),
        });
      expect((await tusAt(a.app, 'ten.bin', 'POST', { 'upload-length': '10' })).statusCode).toBe(201);
      const done = await tusAt(
        b.app,
        'ten.bin',
        'PATCH',
        { 'content-type': OCTETS, 'upload-offset': '0' },
        '0123456789',
      );
      expect(done.statusCode, done.body).toBe(204);
      // Ten bytes stored of twelve: two more fit, through A too, once A has heard the upload ended.
      await until(
        async () => (await tusAt(a.app, 'two.bin', 'POST', { 'upload-length': '2' })).statusCode === 201,
      );
      const over = await tusAt(a.app, 'three.bin', 'POST', { 'upload-length': '3' });
      expect(over.statusCode).toBe(507);
    });

    it('holds back what it will write from the quota on every instance', async () => {
      const token = await carol({ quota: 12 });
      const begin = (app: TestApp['app'], name: string, length: number) =>
        app.inject({
          method: 'POST',
          url: `/api/tus/${name}`,
          headers: { 'x-auth': token, 'tus-resumable': '1.0.0', 'upload-length': String(length) },
        });
      expect((await begin(a.app, 'eight.bin', 8)).statusCode).toBe(201);
      // Eight of twelve bytes are promised through A: B has four left, not twelve.
      const over = await begin(b.app, 'five.bin', 5);
      expect(over.statusCode, over.body).toBe(507);
      expect(over.body).toContain('4 B left of 12 B');
      expect((await begin(b.app, 'four.bin', 4)).statusCode).toBe(201);
      // An upload given up on one gives its room back to the others.
      const cancelled = await a.app.inject({
        method: 'DELETE',
        url: '/api/tus/eight.bin',
        headers: { 'x-auth': token, 'tus-resumable': '1.0.0' },
      });
      expect(cancelled.statusCode).toBe(204);
      await until(async () => (await begin(b.app, 'seven.bin', 7)).statusCode === 201);
    });

    it('leaves nothing held back by an instance taken for dead, and keeps what pending uploads hold', async () => {
      await bStore.reservations.add(bStore.instance.id, ['/carol'], 100);
      await bStore.reservations.add(uploadHolder('pending'), ['/carol'], 7);
      expect(await a.ctx.store.reservations.total('/carol')).toBe(107);
      await sql`UPDATE instances SET seen_at = 0 WHERE id = ${bStore.instance.id}`.execute(bStore.sql);
      await new InstanceRegistry(a.ctx).beat();
      expect(await a.ctx.store.reservations.total('/carol')).toBe(7);
    });

    it('forgets what an upload being created through an instance that died held, and only that', async () => {
      const carolId = (await a.createUser({ username: 'carol', scope: '/carol' })).id;
      // B was creating one upload (its hold taken, the upload not yet recorded) when it died.
      await bStore.uploadCreations.add('creating', carolId, 100);
      await bStore.reservations.add(uploadHolder('creating'), ['/carol'], 100);
      // A pending upload stays held, wherever it began.
      await bStore.reservations.add(uploadHolder('pending'), ['/carol'], 7);
      await sql`UPDATE instances SET seen_at = 0 WHERE id = ${bStore.instance.id}`.execute(bStore.sql);
      await new InstanceRegistry(a.ctx).beat();
      expect(await a.ctx.store.reservations.total('/carol')).toBe(7);
      expect(await a.ctx.store.uploadCreations.of(carolId)).toEqual({ count: 0, bytes: 0 });
    });

    it('is written by one request at a time across them: 423 through the other meanwhile, then on', async () => {
      const token = await carol({ scope: '/' });
      expect((await tus(a.app, token, 'POST', { 'upload-length': '10' })).statusCode).toBe(201);
      // A slow body through A: three bytes come, the rest waits.
      const { body, answer: slow } = await slowPatch(token, 'one');
      await until(held);

      const meanwhile = await patch(b.app, token, 0, 'two');
      expect(meanwhile.statusCode, meanwhile.body).toBe(423);
      expect(meanwhile.body).toContain('another request is writing this upload');
      body.end('two');
      expect((await slow).status).toBe(204);
      expect(await offsetOn(b.app, token)).toBe(6);
      expect((await patch(b.app, token, 6, 'four')).statusCode).toBe(204);
      expect(await fs.readFile(path.join(a.root, 'carol', 'report.bin'), 'utf8')).toBe('onetwofour');
    });

    it('held by an instance whose connection to the database is lost is not put in place by it', async () => {
      const token = await carol({ scope: '/' });
      expect((await tus(a.app, token, 'POST', { 'upload-length': '6' })).statusCode).toBe(201);
      const { body, answer: cut } = await slowPatch(token, 'one');
      await until(held);
      // A's locks go with its connection, as when its process dies: B may take the upload over.
      await sql`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE ${holdsUploadLock(await uploadKey())}`.execute(
        bStore.sql,
      );
      body.end('two');
      const res = await cut;
      expect(res.status, res.body).toBe(409);
      expect(res.body).toContain('the upload was interrupted');
      await expect(fs.stat(path.join(a.root, 'carol', 'report.bin'))).rejects.toThrow();
      // Still pending, with what A wrote before it heard: the next request, through either, goes on.
      const at = await offsetOn(b.app, token);
      const end = await patch(b.app, token, at, 'onetwo'.slice(at));
      expect(end.statusCode, end.body).toBe(204);
      expect(await fs.readFile(path.join(a.root, 'carol', 'report.bin'), 'utf8')).toBe('onetwo');
    });

    it('cut off from its lock writes no more: what the instance that took over put in place stays whole', async () => {
      const token = await carol({ scope: '/' });
      expect((await tus(a.app, token, 'POST', { 'upload-length': '6' })).statusCode).toBe(201);
      const { body, answer: cut } = await slowPatch(token, 'one');
      await until(held);
      await sql`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE ${holdsUploadLock(await uploadKey())}`.execute(
        bStore.sql,
      );
      await until(async () => !(await held()));
      // A has heard of it: its lock line answers again only on a new connection.
      const probe = await a.ctx.store.lockLine.tryHold('probe').catch(() => undefined);
      await probe?.release();
      // B goes on from what is there and ends the upload: its file is in place.
      const at = await offsetOn(b.app, token);
      expect((await patch(b.app, token, at, 'onetwo'.slice(at))).statusCode).toBe(204);
      // A's request sends on, past the length: it neither writes into the file nor cuts it.
      body.end('late!');
      const res = await cut;
      expect(res.status, res.body).toBe(409);
      expect(await fs.readFile(path.join(a.root, 'carol', 'report.bin'), 'utf8')).toBe('onetwo');
    });
  });

  it('count resumable uploads being created through either against one limit', async () => {
    const token = await carol();
    const posts = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a.app : b.app).inject({
          method: 'POST',
          url: `/api/tus/f${i}.bin`,
          headers: { 'x-auth': token, 'tus-resumable': '1.0.0', 'upload-length': '10' },
        }),
      ),
    );
    for (const res of posts) expect([201, 429], res.body).toContain(res.statusCode);
    expect(posts.filter((res) => res.statusCode === 201)).toHaveLength(5);
    expect(await bStore.uploadCreations.of(1)).toEqual({ count: 0, bytes: 0 });
  });

  it('count a finished upload and give back what it held in one step: no check between sees it twice', async () => {
    const token = await carol({ quota: 12 });
    const post = (app: TestApp['app'], name: string) =>
      app.inject({
        method: 'POST',
        url: `/api/resources/${name}`,
        headers: { 'x-auth': token },
        payload: 'sixsix',
      });
    // Waits of this test's database only: other files' run beside it on the cluster.
    const waiting = async (locktype: string) =>
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT count(*) AS n FROM pg_locks WHERE locktype = ${locktype} AND NOT granted
            AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())`.execute(
            bStore.sql,
          )
        ).rows[0]?.n,
      );
    // The give-back of the first upload's hold is held up on its row, from just before it lands.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let blocker: Promise<void> | undefined;
    seam.next(async () => {
      let locked!: () => void;
      const taken = new Promise<void>((resolve) => (locked = resolve));
      blocker = bStore.sql.transaction().execute(async (trx) => {
        await sql`SELECT bytes FROM quota_reservations WHERE holder = ${a.ctx.store.instance.id} FOR UPDATE`.execute(
          trx,
        );
        locked();
        await released;
      });
      await taken;
    });
    const first = post(a.app, 'one.bin');
    await until(async () => (await waiting('transactionid')) > 0);
    // Six of twelve bytes are stored and no longer held: the second six fit, once the first
    // upload's count and give-back are done, never refused in between.
    let answered = false;
    const second = post(b.app, 'two.bin').finally(() => (answered = true));
    await until(async () => answered || (await waiting('advisory')) > 0);
    release();
    await blocker;
    expect((await first).statusCode).toBe(200);
    const fits = await second;
    expect(fits.statusCode, fits.body).toBe(200);
    expect((await post(a.app, 'three.bin')).statusCode).toBe(507);
    expect(await a.ctx.store.reservations.total('/carol')).toBe(0);
  });

  it('bound what one user’s WebDAV properties hold together, set through either', async () => {
    await carol();
    const userId = (await a.ctx.store.users.getByUsername('carol'))!.id;
    const big = (name: string) => `<Z:${name} xmlns:Z="urn:z">${'x'.repeat(60 * 1024)}</Z:${name}>`;
    // 16 × 60 KiB stored: room for one more 60 KiB of the 1 MiB a user's properties may hold.
    for (let i = 0; i < 16; i++) {
      await a.ctx.store.davProps.patch(
        'default',
        `/carol/old${i}.txt`,
        [{ ns: 'urn:z', name: 'big', xml: big('big') }],
        userId,
      );
    }
    for (const n of [1, 2]) await fs.writeFile(path.join(a.root, 'carol', `n${n}.txt`), 'n');
    const basic = 'Basic ' + Buffer.from(`carol:${USER_PASSWORD}`).toString('base64');
    const proppatch = (app: TestApp['app'], n: number) =>
      app.inject({
        method: 'PROPPATCH' as 'GET',
        url: `/dav/n${n}.txt`,
        headers: { authorization: basic, 'content-type': 'application/xml' },
        payload: `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop>${big('big')}</D:prop></D:set></D:propertyupdate>`,
      });
    // The properties' rows are written only once both have been checked: the table is locked
    // against writes (not reads) until the second is answered or waits to write.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const taken = new Promise<void>((resolve) => (locked = resolve));
    const blocker = bStore.sql.transaction().execute(async (trx) => {
      await sql`LOCK TABLE dav_props IN EXCLUSIVE MODE`.execute(trx);
      locked();
      await released;
    });
    await taken;
    const writesWaiting = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'relation' AND NOT granted
            AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())`.execute(
            a.ctx.store.sql,
          )
        ).rows[0]?.n,
      );
    // One through each (Basic sign-ins count against the throttle of 3 in this app).
    let answered = 0;
    const first = proppatch(a.app, 1).finally(() => answered++);
    await until(async () => answered > 0 || (await writesWaiting()) > 0);
    const second = proppatch(b.app, 2).finally(() => answered++);
    await until(async () => answered > 0 || (await writesWaiting()) > 1);
    release();
    await blocker;
    const answers = await Promise.all([first, second]);
    for (const r of answers) expect(r.statusCode, r.body).toBe(207);
    expect(answers.filter((r) => r.body.includes('200 OK'))).toHaveLength(1);
    expect(answers.filter((r) => r.body.includes('507 Insufficient Storage'))).toHaveLength(1);
    expect(await a.ctx.store.davProps.bytesOfUser(userId)).toBeLessThanOrEqual(1024 * 1024);
    expect(await a.ctx.store.reservations.total(`dav-props:${userId}`)).toBe(0);
  });

  it('keep, in a recount through one, what was written through the other while it walked', async () => {
    const token = await carol({ quota: 20_000 });
    await fs.mkdir(path.join(a.root, 'carol', 'd'));
    await fs.writeFile(path.join(a.root, 'carol', 'd', 'old.bin'), 'x'.repeat(1000));
    const used = async (app: TestApp['app'], query = '') => {
      const res = await app.inject({
        method: 'GET',
        url: `/api/usage/${query}`,
        headers: { 'x-auth': token },
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { used: number }).used;
    };
    const onDisk = async () => {
      let bytes = 0;
      for (const e of await fs.readdir(path.join(a.root, 'carol'), {
        withFileTypes: true,
        recursive: true,
      })) {
        if (e.isFile()) bytes += (await fs.stat(path.join(e.parentPath, e.name))).size;
      }
      return bytes;
    };
    expect(await used(a.app, '?recount=true')).toBe(1000);
    // Each time A's walk has read carol's folder and enters d (once per walk: a walk that saw
    // the scope change walks again), B writes into the folder A has read.
    let uploads = 0;
    quotaLedgerOf(a.ctx).walkStep = async (real) => {
      if (path.basename(real) !== 'd') return;
      const res = await b.app.inject({
        method: 'POST',
        url: `/api/resources/late${++uploads}.bin`,
        headers: { 'x-auth': token },
        payload: 'y'.repeat(3000),
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const counted = await used(a.app, '?recount=true');
    quotaLedgerOf(a.ctx).walkStep = undefined;
    expect(uploads).toBeGreaterThan(0);
    expect(counted).toBe(await onDisk());
    expect(await used(b.app)).toBe(counted);
  });

  it('carry work started through one over a renewal of its session through the other', async () => {
    const token = await carol();
    await fs.writeFile(path.join(a.root, 'carol', 'src.txt'), 'to copy');
    await fs.mkdir(path.join(a.root, 'carol', 'out'));
    // Just before the copy lands, the client renews its session through B.
    let renewed: string | undefined;
    seam.next(async () => {
      const res = await b.app.inject({ method: 'POST', url: '/api/renew', headers: { 'x-auth': token } });
      expect(res.statusCode, res.body).toBe(200);
      renewed = res.body;
    });
    const finished = new Promise<Job>((resolve) => a.ctx.jobs.on('finished', resolve));
    const started = await a.app.inject({
      method: 'POST',
      url: '/api/jobs',
      headers: { 'x-auth': token },
      payload: { action: 'copy', items: ['/src.txt'], destination: '/out/' },
    });
    expect(started.statusCode, started.body).toBe(202);
    const job = await finished;
    expect(job.state, job.error).toBe('done');
    expect(await fs.readFile(path.join(a.root, 'carol', 'out', 'src.txt'), 'utf8')).toBe('to copy');
    // The old session ended on both; the new one works on both.
    expect((await a.request(token, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(401);
    expect((await viaB(renewed!, '/api/resources/')).statusCode).toBe(200);
    expect((await a.request(renewed!, { method: 'GET', url: '/api/resources/' })).statusCode).toBe(200);
  });

  describe('renewing a session', () => {
    const renew = (app: TestApp['app'], token: string) =>
      app.inject({ method: 'POST', url: '/api/renew', headers: { 'x-auth': token } });
    const liveSessions = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT count(*) AS n FROM sessions WHERE user_id = (SELECT id FROM users WHERE username = 'carol')`.execute(
            bStore.sql,
          )
        ).rows[0]?.n,
      );

    it('one token renews into one session, however many renewals are sent through either', async () => {
      const token = await carol();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => renew(i % 2 === 0 ? a.app : b.app, token)),
      );
      expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
      for (const r of answers.filter((r) => r.statusCode !== 200)) expect(r.statusCode, r.body).toBe(401);
      expect(await liveSessions()).toBe(1);
    });

    it('never outlives a logout made through the other at the same moment, whichever goes first', async () => {
      // The logout used to look for the session's owner before taking the user's turn: a renewal
      // committed in between left it nothing to end, and answered 200.
      const carolId = (await a.createUser({ username: 'carol', scope: '/carol' })).id;
      for (let round = 0; round < 40; round++) {
        const session = await a.ctx.store.sessions.create(carolId, 3600);
        // The logout starts some round trips after the renewal: every offset is met.
        const later = async () => {
          for (let trip = 0; trip < round % 8; trip++) await a.ctx.store.instances.now();
          await a.ctx.store.sessions.logout(session.id, carolId);
        };
        const [next] = await Promise.all([bStore.sessions.renew(session.id, carolId, 3600, 60_000), later()]);
        expect(await a.ctx.store.sessions.get(session.id)).toBeUndefined();
        if (next) expect(await a.ctx.store.sessions.get(next.id), `round ${round}`).toBeUndefined();
      }
    });

    it('never outlives a logout or the end of every session sent beside it, through the other', async () => {
      const carolId = (await a.createUser({ username: 'carol', scope: '/carol' })).id;
      await fs.mkdir(path.join(a.root, 'carol'), { recursive: true });
      for (let round = 0; round < 10; round++) {
        const token = await a.login('carol');
        const sid = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string })
          .sid;
        const ending =
          round % 2 === 0 ? bStore.sessions.revokeUser(carolId) : b.ctx.auth.logout(sid, carolId);
        const [renewed] = await Promise.all([renew(a.app, token), ending]);
        expect([200, 401], renewed.body).toContain(renewed.statusCode);
        // Whichever came first, nothing of that session is left.
        expect(await liveSessions()).toBe(0);
      }
    });
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

  it('give one home to one of the sign-ups that map to it, sent to both at once', async () => {
    await a.ctx.store.settings.save({ ...a.ctx.store.settings.get(), signup: true, createUserDir: true });
    await until(() => bStore.settings.get().signup && bStore.settings.get().createUserDir);
    const signup = (app: BuiltApp['app'], username: string) =>
      app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username, password: 'a long enough password' },
      });
    const answers = await Promise.all([
      signup(a.app, 'race1'),
      signup(b.app, 'ra..ce1'),
      signup(a.app, 'r..ace1'),
      signup(b.app, 'rac..e1'),
    ]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409]);
    for (const r of answers.filter((r) => r.statusCode === 409)) {
      expect(r.body).toBe('409 Conflict (another user already owns this home folder)\n');
    }
    expect((await a.ctx.store.users.list()).filter((u) => u.scope === '/users/race1')).toHaveLength(1);
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

  it('after an outage, take none for dead before beating again for as long as they may be silent', async () => {
    // The database was away for longer than DEAD_AFTER_MS: nobody could beat, this one included.
    const registry = new InstanceRegistry(b.ctx);
    const t0 = await bStore.instances.now();
    await registry.beat(t0);
    await bStore.instances.register({ id: 'waiting', host: 'h', pid: 1, startedAt: t0, seenAt: t0 });
    const ids = async () => (await bStore.instances.list()).map((i) => i.id);
    const back = t0 + DEAD_AFTER_MS + BEAT_MS;
    await registry.beat(back);
    expect(await ids()).toContain('waiting');
    // It beats on, and the other stays silent all that time: now it is taken for dead.
    for (let at = back + BEAT_MS; at < back + DEAD_AFTER_MS; at += BEAT_MS) await registry.beat(at);
    expect(await ids()).toContain('waiting');
    await registry.beat(back + DEAD_AFTER_MS);
    expect(await ids()).not.toContain('waiting');
  });

  it('take none for dead as one starts just after the database did: they could not beat', async () => {
    // Silent for longer than DEAD_AFTER_MS, but only because the database was down until a
    // moment ago: here, one started just now (`at` is a moment after it came up).
    const upSince = await bStore.instances.upSince();
    await bStore.instances.register({
      id: 'was-waiting',
      host: 'h',
      pid: 1,
      startedAt: 1,
      seenAt: upSince - DEAD_AFTER_MS - 1,
    });
    // B starts again (its row made anew).
    const startB = async (at: number) => {
      await bStore.instances.remove(bStore.instance.id);
      await new InstanceRegistry(b.ctx).start(at);
    };
    await startB(upSince + 1_000);
    const ids = (await bStore.instances.list()).map((i) => i.id);
    expect(ids).toContain('was-waiting');
    // Still silent two minutes after the database came up: dead.
    await startB(upSince + DEAD_AFTER_MS + 1_000);
    expect((await bStore.instances.list()).map((i) => i.id)).not.toContain('was-waiting');
  });

  it('take none of them for dead because the clock of one host runs ahead: times are the database’s', async () => {
    const ahead = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 3 * DEAD_AFTER_MS);
    try {
      await new InstanceRegistry(b.ctx).beat();
    } finally {
      ahead.mockRestore();
    }
    const ids = (await bStore.instances.list()).map((i) => i.id);
    expect(ids).toContain(a.ctx.store.instance.id);
  });

  it('list, follow and cancel a job from either: the one running it stops it and cleans up', async () => {
    const carol = await a.createUser({ username: 'carol', scope: '/carol' });
    const token = await a.login('carol');
    await fs.mkdir(path.join(a.root, 'carol', 'src'), { recursive: true });
    for (const n of [1, 2, 3]) await fs.writeFile(path.join(a.root, 'carol', 'src', `${n}.txt`), `${n}`);
    const asCarol = { 'x-auth': token };
    let seen: { listed: Job[]; followed: Job } | undefined;
    let cancel: Promise<{ statusCode: number; json: () => Job }> | undefined;
    // While the job copies on A (its first file about to land), B lists, follows and cancels it.
    seam.next(async () => {
      const [running] = a.ctx.jobs.runningHere({ id: carol.id });
      const listed = (await b.app.inject({ method: 'GET', url: '/api/jobs', headers: asCarol })).json<
        Job[]
      >();
      const followed = (
        await b.app.inject({ method: 'GET', url: `/api/jobs/${running!.id}`, headers: asCarol })
      ).json<Job>();
      seen = { listed, followed };
      cancel = b.app.inject({ method: 'DELETE', url: `/api/jobs/${running!.id}`, headers: asCarol });
      const record = a.ctx.jobs.here({ id: carol.id }, running!.id)!;
      await until(() => record.signal.aborted);
    });

    const started = await a.request(token, {
      method: 'POST',
      url: '/api/jobs',
      payload: { action: 'copy', items: ['/src'], destination: '/dst/' },
    });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = started.json<{ id: string }>();
    await until(() => cancel !== undefined);
    const cancelled = await cancel!;
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id, state: 'cancelled' });
    expect(seen!.listed.map((j) => [j.id, j.state])).toEqual([[id, 'running']]);
    expect(seen!.followed).toMatchObject({ id, state: 'running', action: 'copy', items: ['/src'] });
    // Stopped where it ran: nothing of the copy is left, and both instances tell how it ended.
    expect(await fs.readdir(path.join(a.root, 'carol'))).toEqual(['src']);
    for (const app of [a.app, b.app]) {
      const job = await app.inject({ method: 'GET', url: `/api/jobs/${id}`, headers: asCarol });
      expect(job.json()).toMatchObject({ id, state: 'cancelled' });
      expect((await app.inject({ method: 'GET', url: '/api/jobs', headers: asCarol })).json()).toEqual([]);
    }
    // Another user's job is nobody else's, on either instance.
    for (const app of [a.app, b.app]) {
      const other = await app.inject({
        method: 'DELETE',
        url: `/api/jobs/${id}`,
        headers: { 'x-auth': a.adminToken },
      });
      expect(other.statusCode).toBe(404);
    }
  });

  it('fail the jobs of a dead instance, for whoever follows them on any instance', async () => {
    const carol = await a.createUser({ username: 'carol', scope: '/carol' });
    const token = await a.login('carol');
    const dead = { id: 'gone', host: 'h', pid: 1, startedAt: 1, seenAt: Date.now() - DEAD_AFTER_MS - 1 };
    await bStore.instances.register(dead);
    await leftJob(bStore, 'gone', carol.id, 'left-behind');
    await leftJob(bStore, a.ctx.store.instance.id, carol.id, 'still-running');
    expect(
      (await viaB(token, '/api/jobs'))
        .json<Job[]>()
        .map((j) => j.id)
        .sort(),
    ).toEqual(['left-behind', 'still-running']);

    await new InstanceRegistry(b.ctx).beat();
    const failed = await a.request(token, { method: 'GET', url: '/api/jobs/left-behind' });
    expect(failed.json()).toMatchObject({ state: 'failed', status: 503 });
    expect(failed.json<Job>().error).toMatch(/^503 Service Unavailable \(the server running the job stopped/);
    expect((await viaB(token, '/api/jobs')).json<Job[]>().map((j) => j.id)).toEqual(['still-running']);
  });

  it('answer a cancel, through either, of a job whose instance died, once that job is failed', async () => {
    const carol = await a.createUser({ username: 'carol', scope: '/carol' });
    const token = await a.login('carol');
    const dead = { id: 'gone', host: 'h', pid: 1, startedAt: 1, seenAt: Date.now() - DEAD_AFTER_MS - 1 };
    await bStore.instances.register(dead);
    await leftJob(bStore, 'gone', carol.id, 'orphan-job');
    const cancel = a.request(token, { method: 'DELETE', url: '/api/jobs/orphan-job' });
    await until(async () => (await bStore.jobs.get(carol.id, 'orphan-job'))?.cancelRequested === true);

    // The instance the cancel waits on settles the dead one itself (no notice reaches its sender).
    await new InstanceRegistry(a.ctx).beat();
    const res = await cancel;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: 'orphan-job', state: 'failed', status: 503 });
  });

  it('stop the jobs of an instance taken for dead, and leave them failed as the others said', async () => {
    const carol = await a.createUser({ username: 'carol', scope: '/carol' });
    const token = await a.login('carol');
    await fs.mkdir(path.join(a.root, 'carol', 'src'), { recursive: true });
    for (const n of [1, 2, 3]) await fs.writeFile(path.join(a.root, 'carol', 'src', `${n}.txt`), `${n}`);
    // While A copies, B takes A for dead (A was silent, say, paused): A's jobs are failed.
    seam.next(async () => {
      const [running] = a.ctx.jobs.runningHere({ id: carol.id });
      const record = a.ctx.jobs.here({ id: carol.id }, running!.id)!;
      await bStore.instances.remove(a.ctx.store.instance.id);
      await bStore.jobs.failInstancesBut([bStore.instance.id], 'failed by B', 503, Date.now());
      // A's next beat finds it was taken for dead: its job stops.
      await new InstanceRegistry(a.ctx).beat();
      await until(() => record.signal.aborted);
    });
    const started = await a.request(token, {
      method: 'POST',
      url: '/api/jobs',
      payload: { action: 'copy', items: ['/src'], destination: '/dst/' },
    });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = started.json<{ id: string }>();
    await until(() => a.ctx.jobs.here({ id: carol.id }, id)?.job.state !== 'running');
    await a.ctx.jobs.here({ id: carol.id }, id)!.ended;
    expect(await fs.readdir(path.join(a.root, 'carol'))).toEqual(['src']);
    expect((await bStore.jobs.get(carol.id, id))?.job).toMatchObject({
      state: 'failed',
      error: 'failed by B',
    });
  });

  it('take turns through both without deadlocks: job starts and upload creations mixed', async () => {
    const token = await carol();
    const asCarol = { 'x-auth': token };
    const requests = Array.from({ length: 48 }, (_, i) => {
      const app = i % 2 === 0 ? a.app : b.app;
      return i % 4 < 2
        ? app.inject({
            method: 'POST',
            url: '/api/jobs',
            headers: asCarol,
            payload: { action: 'copy', items: ['/nope'], destination: '/dst/' },
          })
        : app.inject({
            method: 'POST',
            url: `/api/tus/m${i}.bin`,
            headers: { ...asCarol, 'tus-resumable': '1.0.0', 'upload-length': '10' },
          });
    });
    const answers = await Promise.all(requests);
    for (const res of answers) expect([201, 202, 429], res.body).toContain(res.statusCode);
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
      // A job it was running ended with it: failed, as the next start tells.
      await leftJob(t.ctx.store, 'earlier', 1, 'killed-with-it');
      await new InstanceRegistry(t.ctx).start();
      expect((await t.ctx.store.jobs.get(1, 'killed-with-it'))?.job).toMatchObject({
        state: 'failed',
        status: 503,
      });
      expect(t.ctx.store.instance.shared).toBe(false);
    } finally {
      await t.close();
    }
  });
});
