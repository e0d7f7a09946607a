import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { MAX_RUNNING_JOBS_PER_USER } from '@filebrowser/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

// Clients that go away while a streaming route awaits (the thread pool, the database): the route
// must still hear of it, stop its work and let go of what it holds.

let t: TestApp;
let port: number;
let adminId: number;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  adminId = t.ctx.store.users.getByUsername('admin')!.id;
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
function busyPool(): () => Promise<void> {
  let busy = true;
  const keepBusy = async () => {
    while (busy) await new Promise((r) => crypto.pbkdf2(ADMIN_PASSWORD, 'salt', 300_000, 32, 'sha256', r));
  };
  const workers = Array.from({ length: 8 }, keepBusy);
  return async () => {
    busy = false;
    await Promise.all(workers);
  };
}

/** Sends a GET and closes the connection as soon as it is written, before any answer. */
function closeAfterSend(url: string): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET ${url} HTTP/1.1\r\nhost: x\r\nx-auth: ${t.adminToken}\r\n\r\n`, () => s.destroy());
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

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** Sets a folder's access time into the past, so that reading it (relatime) moves it. */
async function ageAtime(dir: string): Promise<number> {
  const st = await fs.stat(dir);
  const old = new Date(Date.UTC(2020, 0, 1));
  await fs.utimes(dir, old, st.mtime);
  return old.getTime();
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
    expect(await until(() => t.ctx.jobs.running(adminId).length === 0)).toBe(true);
    for (let i = 0; i < MAX_RUNNING_JOBS_PER_USER; i++) {
      expect(t.ctx.jobs.get(adminId, `gone-early-${i}`)?.job.state).toBe('cancelled');
    }
    const next = await get('/api/raw/small?algo=zip&progress=after-the-gone');
    expect(next.status).toBe(200);
    expect(next.cut).toBe(false);
    expect(t.ctx.jobs.get(adminId, 'after-the-gone')?.job.state).toBe('done');
    expect(await until(async () => (await held()).length === 0)).toBe(true);
  });

  it('cuts the download of a job cancelled while it was being measured', async () => {
    const answer = get('/api/raw/tree?algo=zip&progress=cancel-early');
    // The job exists from the step after the plan; measuring it takes many file-system steps more.
    while (!t.ctx.jobs.get(adminId, 'cancel-early')) await new Promise((r) => setImmediate(r));
    const record = t.ctx.jobs.get(adminId, 'cancel-early')!;
    expect(record.job.bytesTotal).toBe(0);
    record.cancel();
    const r = await answer;
    expect(r.cut).toBe(true);
    expect((await record.ended).state).toBe('cancelled');
    expect(await until(async () => (await held()).length === 0)).toBe(true);
  });
});

describe('walks streamed to a client', () => {
  it.each([
    ['search', '/api/search/tree?query=nothing-matches'],
    ['recursive listing', '/api/resources/recursive/tree'],
  ])('a %s whose client went away before it started reads no folder', async (_name, url) => {
    const deep = path.join(t.root, 'tree/a/b');
    const control = path.join(t.root, 'small');
    // A file system mounted noatime cannot tell: the control folder is read the same way.
    const controlAged = await ageAtime(control);
    const aged = await ageAtime(deep);
    const stop = busyPool();
    try {
      await closeAfterSend(url);
    } finally {
      await stop();
    }
    // The walk of a client that stayed, behind the one that left: both are over once it answers.
    const stayed = await get(url.replace('/tree', '/small'));
    expect(stayed.status).toBe(200);
    expect(await until(async () => (await held()).length === 0)).toBe(true);
    if ((await fs.stat(control)).atimeMs === controlAged) return;
    expect((await fs.stat(deep)).atimeMs).toBe(aged);
  });
});

describe('downloads', () => {
  it('closes the file of a client that went away while it was opened', async () => {
    await fs.writeFile(path.join(t.root, 'big.bin'), crypto.randomBytes(2_000_000));
    const stop = busyPool();
    try {
      await closeAfterSend('/api/raw/big.bin');
      await closeAfterSend('/api/raw/big.bin?inline=true');
    } finally {
      await stop();
    }
    expect(await until(async () => (await held()).length === 0)).toBe(true);
    const next = await get('/api/raw/big.bin');
    expect(next.body.length).toBe(2_000_000);
  });
});
