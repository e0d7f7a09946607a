import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Job } from '@filebrowser/contract';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging.js';
import { PASSWORD } from './files-helpers.js';
import {
  DISK_FULL,
  fillDisk,
  freeBytes,
  rootOnDisk,
  startWithSmallDisk,
  type SmallDisk,
} from './full-disk.js';
import { mountTmpfs, unmountTmpfs } from './tools.js';

/**
 * One upload meeting a full disk must not end the server. Every path that writes is
 * made to meet ENOSPC in the middle of its bytes (never at the open: the disk keeps some room),
 * through the real server on real sockets. Each time the server answers 507 with the words of
 * the disk-full error while the client may still be sending, writes the access-log line of the
 * request, leaves no partial file, and goes on answering requests. An unhandled rejection (what
 * ended the process) fails the test that caused it.
 */
const WHY = 'the disk-full tests need a real small file system (a tmpfs: root and mount(8))';

const rejections: unknown[] = [];
let onRejected: ((reason: unknown) => void) | undefined;
const collect = (reason: unknown) => {
  rejections.push(reason);
  onRejected?.(reason);
};
beforeAll(() => void process.on('unhandledRejection', collect));
afterAll(() => void process.off('unhandledRejection', collect));

let small: SmallDisk | undefined;
const mounts: string[] = [];
/** Client connections still open: a failed test must not leave the server waiting for them. */
const clients = new Set<net.Socket>();
afterEach(async () => {
  onRejected = undefined;
  for (const socket of clients) socket.destroy();
  for (const dir of mounts.splice(0)) unmountTmpfs(dir);
  await small?.close();
  small = undefined;
  expect(rejections.splice(0).map(String), 'unhandled rejections').toEqual([]);
});

interface Served {
  small: SmallDisk;
  port: number;
  /** The records the server logged (its production logger, JSON lines). */
  lines: Array<Record<string, unknown>>;
  bob: string;
  home: string;
}

/** The app on a small disk, listening on a real port, with bob signed in. */
async function serve(
  size: string,
  layout: Parameters<typeof startWithSmallDisk>[2],
): Promise<Served | undefined> {
  const lines: Array<Record<string, unknown>> = [];
  const capture = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  small = await startWithSmallDisk(size, WHY, layout, { logger: createLogger(capture, 'json', 'info') });
  if (!small) return undefined;
  await small.app.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (small.app.app.server.address() as net.AddressInfo).port;
  const bob = await small.app.user('bob');
  return { small, port, lines, bob, home: path.join(small.app.ctx.config.root, 'bob') };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request on its own connection. With `pauseAt`, only that many bytes of the body are sent
 * until the answer comes: the server must answer while the client is still sending. An
 * unhandled rejection meanwhile fails the request (what ended the process is not waited out).
 */
function exchange(
  port: number,
  req: { method: string; url: string; headers?: Record<string, string>; body?: Buffer; pauseAt?: number },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = req.body ?? Buffer.alloc(0);
    const socket = net.connect(port, '127.0.0.1');
    clients.add(socket);
    socket.once('close', () => clients.delete(socket));
    onRejected = (reason) => {
      socket.destroy();
      reject(new Error(`the server left a failure unhandled: ${String(reason)}`));
    };
    let received = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...fields] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      onRejected = undefined;
      socket.destroy();
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString(),
      });
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed before a whole answer: ${received.toString()}`)));
    const head = Object.entries({ host: 'localhost', 'content-length': String(body.length), ...req.headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`${req.method} ${req.url} HTTP/1.1\r\n${head}\r\n`);
    socket.write(body.subarray(0, req.pauseAt ?? body.length));
  });
}

/** The access-log record of a request, found by method, path and status. */
function logged(s: Served, method: string, url: string, status: number) {
  return s.lines.find(
    (l) => l.event === 'request' && l.method === method && l.path === url && l.status === status,
  );
}

/** The server still answers on the same app: a listing over a fresh connection. */
async function stillServes(s: Served): Promise<void> {
  const res = await exchange(s.port, { method: 'GET', url: '/api/resources/', headers: { 'x-auth': s.bob } });
  expect(res.status).toBe(200);
}

/** Everything below a folder, recursively (staging files included). */
async function everything(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

const MiB = 1024 * 1024;
/** The body sent before the client waits for the answer: more than one 1 MiB write batch. */
const FIRST = 1.5 * MiB;
/** Room left on the disk: the first write of the body gets this far, then meets the full disk. */
const ROOM = 256 * 1024;

describe('a write meeting a full disk in the middle of its body', () => {
  for (const [name, method, url, existing] of [
    ['POST /api/resources (upload)', 'POST', '/api/resources/up.bin', false],
    ['PUT /api/resources (save)', 'PUT', '/api/resources/notes.txt', true],
    ['WebDAV PUT', 'PUT', '/dav/up.bin', false],
  ] as const) {
    it(`${name}: 507 while the client still sends, a log line, no partial file, the server lives`, async () => {
      const s = await serve('4m', rootOnDisk());
      if (!s) return;
      if (existing) await fs.writeFile(path.join(s.home, 'notes.txt'), 'the old notes');
      await fillDisk(s.small.disk, ROOM);
      const before = await freeBytes(s.small.disk);
      const auth: Record<string, string> = url.startsWith('/dav/')
        ? { authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64') }
        : { 'x-auth': s.bob };

      const res = await exchange(s.port, {
        method,
        url,
        headers: auth,
        body: Buffer.alloc(3 * MiB, 'u'),
        pauseAt: FIRST,
      });
      expect(res.status).toBe(507);
      expect(res.body).toBe(DISK_FULL);
      expect(logged(s, method, url, 507)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
      expect(await everything(s.home)).toEqual(existing ? ['notes.txt'] : []);
      if (existing) expect(await fs.readFile(path.join(s.home, 'notes.txt'), 'utf8')).toBe('the old notes');
      expect(await freeBytes(s.small.disk)).toBe(before);
      await stillServes(s);
    });
  }

  it('tus PATCH: 507 while the client still sends, the upload keeps its offset, the server lives', async () => {
    const s = await serve('8m', rootOnDisk({ dbOnDisk: true }));
    if (!s) return;
    const tus = { 'x-auth': s.bob, 'tus-resumable': '1.0.0' };
    const created = await exchange(s.port, {
      method: 'POST',
      url: '/api/tus/big.bin',
      headers: { ...tus, 'upload-length': String(3 * MiB) },
    });
    expect(created.status).toBe(201);
    await fillDisk(s.small.disk, ROOM);
    const before = await freeBytes(s.small.disk);

    const res = await exchange(s.port, {
      method: 'PATCH',
      url: '/api/tus/big.bin',
      headers: { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      body: Buffer.alloc(3 * MiB, 't'),
      pauseAt: FIRST,
    });
    expect(res.status).toBe(507);
    expect(res.body).toBe(DISK_FULL);
    expect(logged(s, 'PATCH', '/api/tus/big.bin', 507)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
    expect(await freeBytes(s.small.disk)).toBe(before);
    const head = await exchange(s.port, { method: 'HEAD', url: '/api/tus/big.bin', headers: tus });
    expect(head.headers['upload-offset']).toBe('0');
    expect(await everything(s.home)).toEqual([]);
    await stillServes(s);
  });

  it('PATCH action=copy: 507, a log line, no partial copy, the server lives', async () => {
    const s = await serve('4m', rootOnDisk());
    if (!s) return;
    await fs.writeFile(path.join(s.home, 'big.bin'), Buffer.alloc(MiB, 'b'));
    await fillDisk(s.small.disk, ROOM);
    const before = await freeBytes(s.small.disk);

    const url = '/api/resources/big.bin';
    const res = await exchange(s.port, {
      method: 'PATCH',
      url: `${url}?action=copy&destination=%2Fcopy.bin`,
      headers: { 'x-auth': s.bob },
    });
    expect(res.status).toBe(507);
    expect(res.body).toBe(DISK_FULL);
    expect(logged(s, 'PATCH', url, 507)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
    expect(await everything(s.home)).toEqual(['big.bin']);
    expect(await freeBytes(s.small.disk)).toBe(before);
    await stillServes(s);
  });

  it('a copy job: fails with the disk-full words, a log line, no partial copy, the server lives', async () => {
    const s = await serve('4m', rootOnDisk());
    if (!s) return;
    await fs.writeFile(path.join(s.home, 'big.bin'), Buffer.alloc(MiB, 'b'));
    await fs.mkdir(path.join(s.home, 'into'));
    await fillDisk(s.small.disk, ROOM);
    const before = await freeBytes(s.small.disk);
    const finished = new Promise<Job>((resolve) => s.small.app.ctx.jobs.once('finished', resolve));

    const res = await exchange(s.port, {
      method: 'POST',
      url: '/api/jobs',
      headers: { 'x-auth': s.bob, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ action: 'copy', items: ['/big.bin'], destination: '/into' })),
    });
    expect(res.status).toBe(202);
    const job = await finished;
    expect(job).toMatchObject({ state: 'failed', status: 507, error: DISK_FULL.trimEnd() });
    expect(logged(s, 'POST', '/api/jobs', 202)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
    expect(await everything(s.home)).toEqual(['big.bin', 'into']);
    expect(await freeBytes(s.small.disk)).toBe(before);
    await stillServes(s);
  });

  it('a trash restore across file systems: 507, a log line, the item stays, the server lives', async () => {
    // The root on the ordinary disk, a small one mounted inside bob's home: a restore copies.
    const s = await serve('4m', (_disk, base) => ({ root: path.join(base, 'root') }));
    if (!s) return;
    const mnt = path.join(s.home, 'mnt');
    await fs.mkdir(mnt);
    if (!mountTmpfs(mnt, '2m', WHY)) return;
    mounts.push(mnt);
    await fs.writeFile(path.join(mnt, 'big.bin'), Buffer.alloc(MiB, 'r'));
    const deleted = await exchange(s.port, {
      method: 'DELETE',
      url: '/api/resources/mnt/big.bin',
      headers: { 'x-auth': s.bob },
    });
    expect(deleted.status).toBe(204);
    const [item] = await s.small.app.ctx.store.trash.list(
      (await s.small.app.ctx.store.users.getByUsername('bob'))!.id,
    );
    await fillDisk(mnt, ROOM);
    const before = await freeBytes(mnt);

    const url = `/api/trash/${item!.id}/restore`;
    const res = await exchange(s.port, { method: 'POST', url, headers: { 'x-auth': s.bob } });
    expect(res.status).toBe(507);
    expect(res.body).toBe(DISK_FULL);
    expect(logged(s, 'POST', url, 507)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
    expect(await everything(mnt)).toEqual(['.filler']);
    expect(await freeBytes(mnt)).toBe(before);
    expect(
      (
        await s.small.app.ctx.store.trash.list((await s.small.app.ctx.store.users.getByUsername('bob'))!.id)
      ).map((i) => i.id),
    ).toEqual([item!.id]);
    await stillServes(s);
  });

  it('the preview cache: the thumbnail is still served, no partial cache file, the server lives', async () => {
    // A preview is an answer made from the file; its copy in the cache is only a saving, so a
    // full cache disk costs the saving, not the answer.
    const s = await serve('2m', (disk, base) => ({
      root: path.join(base, 'root'),
      cacheDir: path.join(disk, 'cache'),
    }));
    if (!s) return;
    const noise = Buffer.alloc(600 * 600 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
    await sharp(noise, { raw: { width: 600, height: 600, channels: 3 } })
      .jpeg({ quality: 95 })
      .toFile(path.join(s.home, 'noise.jpg'));
    await fillDisk(s.small.disk, 8 * 1024);

    const url = '/api/preview/thumb/noise.jpg';
    const res = await exchange(s.port, {
      method: 'GET',
      url: `${url}?inline=true`,
      headers: { 'x-auth': s.bob },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(Number(res.headers['content-length'])).toBeGreaterThan(8 * 1024);
    expect(logged(s, 'GET', url, 200)).toMatchObject({ address: '127.0.0.1', user: 'bob' });
    // Folders of the cache's mirror may be there; no file, whole or partial.
    const cache = await fs.readdir(s.small.disk, { recursive: true, withFileTypes: true });
    expect(cache.filter((e) => e.isFile() && e.name !== '.filler').map((e) => e.name)).toEqual([]);
    await stillServes(s);
  });
});
