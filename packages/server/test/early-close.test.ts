import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { MAX_RUNNING_JOBS_PER_USER } from '@filebrowser/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchLookupsForTests } from '../src/files/access/anchor.js';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

// Clients that go away while a streaming route awaits (the thread pool, the database): the route
// must still hear of it, stop its work and let go of what it holds.

let t: TestApp;
let port: number;
let adminId: number;

beforeAll(async () => {
  // One image processor: previews queue behind each other.
  t = await startTestApp({ imageProcessors: 1, metrics: true });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  adminId = (await t.ctx.store.users.getByUsername('admin'))!.id;
  await fs.mkdir(path.join(t.root, 'tree/a/b'), { recursive: true });
  for (let i = 0; i < 20; i++) {
    await fs.writeFile(path.join(t.root, `tree/a/f${i}.bin`), crypto.randomBytes(200_000));
  }
  await fs.mkdir(path.join(t.root, 'small'));
  await fs.writeFile(path.join(t.root, 'small/one.txt'), 'one');
});
afterAll(async () => t.close());

/**
 * Keeps libuv's thread pool queued (the server runs in this process) until the returned stop, so
 * a request's file-system work waits while its client's close already arrives.
 */
function busyPool(iterations = 300_000): () => Promise<void> {
  let busy = true;
  const keepBusy = async () => {
    while (busy) await new Promise((r) => crypto.pbkdf2(ADMIN_PASSWORD, 'salt', iterations, 32, 'sha256', r));
  };
  const workers = Array.from({ length: 8 }, keepBusy);
  return async () => {
    busy = false;
    await Promise.all(workers);
  };
}

/**
 * Sends a request whose body declares `declared` bytes, writes `sent` of them and closes the
 * connection: an upload cut short.
 */
function cutUpload(
  method: string,
  url: string,
  auth: Record<string, string>,
  headers: Record<string, string>,
  declared: number,
  sent: number,
): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      const head = Object.entries({
        host: 'x',
        ...auth,
        'content-length': String(declared),
        ...headers,
      })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      s.write(`${method} ${url} HTTP/1.1\r\n${head}\r\n`);
      s.write(Buffer.alloc(sent, 'u'), () => s.destroy());
    });
    s.on('close', () => resolve());
    s.on('error', () => undefined);
  });
}

/** A request with a whole body, read to its end. */
function send(
  method: string,
  url: string,
  auth: Record<string, string>,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { port, host: '127.0.0.1', method, path: url, headers: { ...auth, ...headers } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends a GET and closes the connection as soon as it is written, before any answer. */
function closeAfterSend(
  url: string,
  headers: Record<string, string> = { 'x-auth': t.adminToken },
): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      const head = Object.entries({ host: 'x', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      s.write(`GET ${url} HTTP/1.1\r\n${head}\r\n`, () => s.destroy());
    });
    s.on('close', () => resolve());
    s.on('error', () => undefined);
  });
}

interface Answer {
  status: number;
  body: Buffer;
  /** The connection ended before the whole body. */
  cut: boolean;
}

/** A GET read to its end; a connection cut before the answer is `cut` with status 0. */
function get(url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: url, headers: { 'x-auth': t.adminToken } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), cut: false }));
        res.on('error', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), cut: true }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: Buffer.alloc(0), cut: true }));
  });
}

/** Descriptors of this process that point into the test's folders (served files, pinned folders). */
async function held(): Promise<string[]> {
  const out: string[] = [];
  for (const fd of await fs.readdir('/proc/self/fd')) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(t.root)) out.push(target);
  }
  return out;
}

/** Waits until no file below the root is held open; names the ones still held if it times out. */
async function expectEveryFileLetGo(): Promise<void> {
  const letGo = await until(async () => (await held()).length === 0);
  expect(letGo ? [] : await held(), 'every file let go').toEqual([]);
}

/** Every file below a folder, staging files included. */
async function namesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    found.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return found.sort();
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** Names of this process's child processes that are still running (not zombies). */
async function children(): Promise<string[]> {
  const names: string[] = [];
  for (const task of await fs.readdir('/proc/self/task')) {
    const list = await fs.readFile(`/proc/self/task/${task}/children`, 'utf8').catch(() => '');
    for (const pid of list.split(' ').filter(Boolean)) {
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (stat && state !== 'Z') names.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
    }
  }
  return names;
}

/** Reads the first bytes of a GET's body, then closes the connection. */
function leaveMidStream(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: url, headers: { 'x-auth': t.adminToken } },
      (res) => {
        res.once('data', (c: Buffer) => {
          req.destroy();
          resolve(c.length);
        });
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

describe('archive downloads with progress', () => {
  it('ends the job of a client that went away while the archive was measured, and frees its slot', async () => {
    const stop = busyPool();
    try {
      for (let i = 0; i < MAX_RUNNING_JOBS_PER_USER; i++) {
        await closeAfterSend(`/api/raw/tree?algo=zip&progress=gone-early-${i}`);
      }
    } finally {
      await stop();
    }
    expect(await until(() => t.ctx.jobs.runningHere({ id: adminId }).length === 0)).toBe(true);
    for (let i = 0; i < MAX_RUNNING_JOBS_PER_USER; i++) {
      // A request whose close came before its handler never made a job.
      expect(['cancelled', undefined]).toContain(
        t.ctx.jobs.here({ id: adminId }, `gone-early-${i}`)?.job.state,
      );
    }
    // A gone request's handler may still be between its plan and its job when the running ones
    // have ended: its job starts, hears that its client left and ends too. Until then the user's
    // slots can be full (429); a slot that is never given back keeps this at 429 to the deadline.
    let next: Answer | undefined;
    const freed = await until(async () => {
      next = await get('/api/raw/small?algo=zip&progress=after-the-gone');
      return next.status !== 429;
    });
    expect(freed, 'a job slot is given back').toBe(true);
    if (!next) throw new Error('no answer');
    expect(next.status).toBe(200);
    expect(next.cut).toBe(false);
    expect(t.ctx.jobs.here({ id: adminId }, 'after-the-gone')?.job.state).toBe('done');
    await expectEveryFileLetGo();
  });

  it('cuts the download of a job cancelled while it was being measured', async () => {
    const answer = get('/api/raw/tree?algo=zip&progress=cancel-early');
    // The job exists from the step after the plan; measuring it takes many file-system steps more.
    while (!t.ctx.jobs.here({ id: adminId }, 'cancel-early')) await new Promise((r) => setImmediate(r));
    const record = t.ctx.jobs.here({ id: adminId }, 'cancel-early')!;
    expect(record.job.bytesTotal).toBe(0);
    record.cancel();
    const r = await answer;
    expect(r.cut).toBe(true);
    expect((await record.ended).state).toBe('cancelled');
    await expectEveryFileLetGo();
  });
});

describe('archives compressed by a tool', () => {
  it.each(['tarxz', 'tarzst', 'targz'])(
    '%s: a client gone mid-stream or before the start leaves no compressor and no open file',
    async (algo) => {
      expect(await leaveMidStream(`/api/raw/tree?algo=${algo}`)).toBeGreaterThan(0);
      const stop = busyPool();
      try {
        await closeAfterSend(`/api/raw/tree?algo=${algo}`);
      } finally {
        await stop();
      }
      expect(await until(async () => (await children()).length === 0), 'no compressor left').toBe(true);
      await expectEveryFileLetGo();
      const next = await get(`/api/raw/small?algo=${algo}`);
      expect(next.status).toBe(200);
      expect(next.cut).toBe(false);
    },
  );
});

describe('walks streamed to a client', () => {
  it.each([
    ['search', '/api/search/tree?query=nothing-matches'],
    ['recursive listing', '/api/resources/recursive/tree'],
  ])('a %s whose client went away before it started opens no folder', async (_name, url) => {
    // Every folder of a walk below its root is opened by looking it up in its parent.
    const below = (await fs.realpath(path.join(t.root, 'tree'))) + '/';
    const opened: string[] = [];
    const unwatch = watchLookupsForTests((real) => {
      if (real.startsWith(below)) opened.push(real);
    });
    try {
      const stop = busyPool();
      try {
        await closeAfterSend(url);
      } finally {
        await stop();
      }
      // The walk of a client that stayed, behind the one that left: both are over once it answers.
      const stayed = await get(url.replace('/tree', '/small'));
      expect(stayed.status).toBe(200);
      await expectEveryFileLetGo();
    } finally {
      unwatch();
    }
    expect(opened, 'folders the walk opened').toEqual([]);
  });
});

describe('downloads', () => {
  it('closes the file of a client that went away while it was opened (raw, ranges, WebDAV)', async () => {
    await fs.writeFile(path.join(t.root, 'big.bin'), crypto.randomBytes(2_000_000));
    const stop = busyPool();
    try {
      const admin = { 'x-auth': t.adminToken };
      await closeAfterSend('/api/raw/big.bin');
      await closeAfterSend('/api/raw/big.bin?inline=true');
      await closeAfterSend('/api/raw/big.bin', { ...admin, range: 'bytes=0-99,1000-1999' });
      const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
      await closeAfterSend('/dav/big.bin', { authorization: basic });
    } finally {
      await stop();
    }
    await expectEveryFileLetGo();
    const next = await get('/api/raw/big.bin');
    expect(next.body.length).toBe(2_000_000);
    const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
    expect((await send('GET', '/dav/big.bin', { authorization: basic }, {}, Buffer.alloc(0))).status).toBe(
      200,
    );
  });
});

describe('uploads cut short', () => {
  const QUOTA = 1_000_000;
  let users = 0;

  /** A user of their own folder with a quota, so each case counts only its own writes. */
  async function quotaUser(basic: boolean): Promise<{ auth: Record<string, string>; home: string }> {
    const username = `quo${++users}`;
    await t.createUser({
      username,
      scope: `/${username}`,
      perm: { ...ALL_PERMISSIONS, admin: false },
      quota: QUOTA,
    });
    const auth: Record<string, string> = basic
      ? { authorization: `Basic ${Buffer.from(`${username}:${USER_PASSWORD}`).toString('base64')}` }
      : { 'x-auth': await t.login(username) };
    return { auth, home: path.join(t.root, username) };
  }

  it.each([
    ['POST /api/resources', 'POST', '/api/resources/cut.bin?override=true'],
    ['PUT /api/resources', 'PUT', '/api/resources/cut.bin'],
    ['WebDAV PUT', 'PUT', '/dav/cut.bin'],
  ])(
    '%s: a client gone mid-body leaves no file, no staging file and no reservation',
    async (_name, method, url) => {
      const { auth, home } = await quotaUser(url.startsWith('/dav'));
      await fs.mkdir(home, { recursive: true });
      if (method === 'PUT') await fs.writeFile(path.join(home, 'cut.bin'), 'before');
      const before = await namesBelow(home);
      const stop = busyPool();
      try {
        // Each declares most of the quota: one reservation left behind refuses the upload after.
        for (let i = 0; i < 3; i++) await cutUpload(method, url, auth, {}, 800_000, 100_000);
      } finally {
        await stop();
      }
      await expectEveryFileLetGo();
      expect(await until(async () => (await namesBelow(home)).join() === before.join())).toBe(true);
      if (method === 'PUT') expect(await fs.readFile(path.join(home, 'cut.bin'), 'utf8')).toBe('before');
      const whole = await send(method, url, auth, {}, Buffer.alloc(900_000, 'w'));
      expect(whole.status, whole.body).toBeLessThan(300);
      expect((await fs.stat(path.join(home, 'cut.bin'))).size).toBe(900_000);
    },
  );

  it('tus: a PATCH cut short keeps what arrived, and the next PATCH goes on from there', async () => {
    const { auth, home } = await quotaUser(false);
    const tus = { 'tus-resumable': '1.0.0' };
    const octets = { ...tus, 'content-type': 'application/offset+octet-stream' };
    const created = await send(
      'POST',
      '/api/tus/resumed.bin',
      auth,
      { ...tus, 'upload-length': '900000' },
      Buffer.alloc(0),
    );
    expect(created.status, created.body).toBe(201);
    const stop = busyPool();
    try {
      await cutUpload(
        'PATCH',
        '/api/tus/resumed.bin',
        auth,
        { ...octets, 'upload-offset': '0' },
        800_000,
        100_000,
      );
    } finally {
      await stop();
    }
    await expectEveryFileLetGo();
    const head = await send('HEAD', '/api/tus/resumed.bin', auth, tus, Buffer.alloc(0));
    const offset = Number(head.headers['upload-offset']);
    expect(offset).toBeLessThanOrEqual(100_000);
    const rest = await send(
      'PATCH',
      '/api/tus/resumed.bin',
      auth,
      { ...octets, 'upload-offset': String(offset) },
      Buffer.alloc(900_000 - offset, 't'),
    );
    expect(rest.status, rest.body).toBe(204);
    expect((await fs.stat(path.join(home, 'resumed.bin'))).size).toBe(900_000);
  });
});

describe('previews', () => {
  const pics = () => path.join(t.root, 'pics');
  const cached = async () =>
    (
      await fs.readdir(path.join(path.dirname(t.root), 'cache'), { recursive: true, withFileTypes: true })
    ).filter((e) => e.isFile()).length;
  const gauge = async (name: string) => {
    const text = (await t.request(t.adminToken, { method: 'GET', url: '/metrics' })).body;
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  };

  beforeAll(async () => {
    await fs.mkdir(pics());
    for (let i = 0; i < 8; i++) {
      const image = sharp({
        create: { width: 1600, height: 1200, channels: 3, background: { r: 40 * i, g: 0, b: 0 } },
      });
      await fs.writeFile(path.join(pics(), `p${i}.png`), await image.png().toBuffer());
    }
  });

  it('drops the queued previews of clients that went away: the next one waits only for what is wanted', async () => {
    const before = await cached();
    const stop = busyPool(50_000);
    let first: Promise<Answer>;
    try {
      first = get('/api/preview/thumb/pics/p0.png');
      expect(
        await until(async () => (await gauge('filebrowser_previews_running')) === 1),
        'one preview being made',
      ).toBe(true);
      for (let i = 1; i <= 4; i++) await closeAfterSend(`/api/preview/thumb/pics/p${i}.png`);
    } finally {
      await stop();
    }
    expect((await first).status).toBe(200);
    const last = await get('/api/preview/thumb/pics/p5.png');
    expect(last.status).toBe(200);
    await expectEveryFileLetGo();
    expect(await gauge('filebrowser_previews_queued')).toBe(0);
    // Made and cached: the two that were wanted, none of the four nobody waited for.
    expect((await cached()) - before).toBe(2);
  });

  it('still answers a request for a preview whose other requester went away', async () => {
    const stop = busyPool(50_000);
    let holder: Promise<Answer>;
    let stayed: Promise<Answer>;
    try {
      holder = get('/api/preview/thumb/pics/p7.png');
      expect(
        await until(async () => (await gauge('filebrowser_previews_running')) === 1),
        'one preview being made',
      ).toBe(true);
      await closeAfterSend('/api/preview/thumb/pics/p6.png');
      stayed = get('/api/preview/thumb/pics/p6.png');
    } finally {
      await stop();
    }
    expect((await holder).status).toBe(200);
    const answer = await stayed;
    expect(answer.status).toBe(200);
    expect((await sharp(answer.body).metadata()).width).toBeGreaterThan(0);
    await expectEveryFileLetGo();
  });
});
