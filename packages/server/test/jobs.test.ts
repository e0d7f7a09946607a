import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { MAX_RUNNING_JOBS_PER_USER, type Job } from '@filebrowser/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobRegistry } from '../src/jobs/registry.js';
import { ALL, deny, startFilesApp, type FilesApp } from './files-helpers.js';

const FILES = 24;
const FILE_SIZE = 96 * 1024;

let t: FilesApp;
let ann: string;
let annId: number;
let bob: string;

/** Every file below `dir` with its content, relative paths sorted (staging files included). */
async function inventory(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await fs.readdir(dir, { recursive: true })).sort()) {
    const p = path.join(dir, name);
    const st = await fs.lstat(p);
    out[name] = st.isFile() ? (await fs.readFile(p)).toString('base64').slice(0, 32) + st.size : 'dir';
  }
  return out;
}

async function makeBigFolder(dir: string): Promise<void> {
  await fs.mkdir(path.join(dir, 'sub'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const where = i % 2 ? dir : path.join(dir, 'sub');
    await fs.writeFile(path.join(where, `f${i}.bin`), Buffer.alloc(FILE_SIZE, i));
  }
}

const home = (...p: string[]) => path.join(t.root, 'ann', ...p);

/** The audit records of a job's items (written now, not at the next batch). */
async function auditOf(jobId: string) {
  await t.ctx.audit.flush();
  return (await t.ctx.store.audit.list({ username: 'ann' }, 100)).filter(
    (r) => r.detail === `job ${jobId}` || r.detail.startsWith(`job ${jobId} `),
  );
}

/** The next `finished` event of the job `id` (subscribed before the work can end). */
function finished(id: () => string | undefined): Promise<Job> {
  return new Promise((resolve) => {
    const listener = (job: Job) => {
      if (job.id !== id()) return;
      t.ctx.jobs.off('finished', listener);
      resolve(job);
    };
    t.ctx.jobs.on('finished', listener);
  });
}

async function startJob(token: string, payload: object) {
  return t.req(token, { method: 'POST', url: '/api/jobs', payload });
}

/** Starts a job and waits for its end through the registry's events. */
async function runJob(token: string, payload: object): Promise<Job> {
  const started: { id?: string } = {};
  const ended = finished(() => started.id);
  const res = await startJob(token, payload);
  expect(res.statusCode, res.body).toBe(202);
  started.id = (res.json() as { id: string }).id;
  // A job that ended before its id was known is read back.
  const now = await t.get(token, `/api/jobs/${started.id}`);
  const job = now.json() as Job;
  return job.state === 'running' ? ended : job;
}

beforeAll(async () => {
  // As many heavy requests per user as jobs: the jobs' own bound is what is tested here (archive
  // downloads are heavy work too, see security-fairness.test.ts).
  t = await startFilesApp({ heavyPerUser: MAX_RUNNING_JOBS_PER_USER });
  ann = await t.user('ann');
  annId = (await t.ctx.store.users.getByUsername('ann'))!.id;
  bob = await t.user('bob');
});
afterAll(() => t.close());
afterEach(async () => {
  await fs.rm(home(), { recursive: true, force: true });
  await fs.mkdir(home());
});

describe('copy and move jobs', () => {
  it('copies a folder, reporting bytes and entries against totals counted first', async () => {
    await makeBigFolder(home('big'));
    await fs.mkdir(home('to'));
    const seen: Job[] = [];
    const listener = (job: Job) => void seen.push(job);
    t.ctx.jobs.on('progress', listener);
    const job = await runJob(ann, { action: 'copy', items: ['/big'], destination: '/to' });
    t.ctx.jobs.off('progress', listener);
    expect(job).toMatchObject({
      state: 'done',
      action: 'copy',
      items: ['/big'],
      destination: '/to',
      bytesTotal: FILES * FILE_SIZE,
      bytesDone: FILES * FILE_SIZE,
      itemsTotal: FILES + 2,
      itemsDone: FILES + 2,
    });
    const mine = seen.filter((j) => j.id === job.id);
    // Progress came in steps, each no more than the total, never going back.
    expect(mine.length).toBeGreaterThan(FILES);
    for (let i = 1; i < mine.length; i++)
      expect(mine[i]!.bytesDone).toBeGreaterThanOrEqual(mine[i - 1]!.bytesDone);
    expect(mine.every((j) => j.bytesTotal === FILES * FILE_SIZE && j.bytesDone <= j.bytesTotal)).toBe(true);
    expect(await inventory(home('to', 'big'))).toEqual(await inventory(home('big')));
    const read = await t.get(ann, `/api/jobs/${job.id}`);
    expect(read.statusCode).toBe(200);
    expect((read.json() as Job).state).toBe('done');
    // A finished job is no longer among the running ones.
    expect((await t.get(ann, '/api/jobs')).json()).toEqual([]);
    // Its item is in the audit log as the same PATCH would have put it.
    expect(await auditOf(job.id)).toEqual([
      expect.objectContaining({ action: 'file.copy', path: '/big', destination: '/to/big', status: 200 }),
    ]);
  });

  it('a copy cancelled mid-way leaves no partial destination and the source whole', async () => {
    await makeBigFolder(home('big'));
    await fs.mkdir(home('to'));
    const before = await inventory(home('big'));
    let id: string | undefined;
    let cancelledAt: Job | undefined;
    const listener = (job: Job) => {
      if (!id || job.id !== id || job.bytesDone === 0 || cancelledAt) return;
      cancelledAt = job;
      // Synchronously, from inside the copy: the cancel lands between two reads.
      t.ctx.jobs.here({ id: annId }, id)!.cancel();
    };
    t.ctx.jobs.on('progress', listener);
    // The id is known before the first byte is copied: the job measures first.
    const ids = new Promise<void>((resolve) =>
      t.ctx.jobs.once('progress', (job) => {
        id = job.id;
        resolve();
      }),
    );
    const ended = finished(() => id);
    const res = await startJob(ann, { action: 'copy', items: ['/big'], destination: '/to' });
    expect(res.statusCode).toBe(202);
    await ids;
    expect(id).toBe((res.json() as { id: string }).id);
    const job = await ended;
    t.ctx.jobs.off('progress', listener);
    expect(cancelledAt!.bytesDone).toBeLessThan(FILES * FILE_SIZE);
    expect(job.state).toBe('cancelled');
    expect(await fs.readdir(home('to'))).toEqual([]);
    expect(await inventory(home('big'))).toEqual(before);
    // DELETE of an ended job answers how it ended.
    const del = await t.req(ann, { method: 'DELETE', url: `/api/jobs/${id}` });
    expect(del.statusCode).toBe(200);
    expect((del.json() as Job).state).toBe('cancelled');
    expect(await auditOf(id!)).toEqual([
      expect.objectContaining({
        action: 'file.copy',
        path: '/big',
        status: 499,
        detail: `job ${id} cancelled`,
      }),
    ]);
  });

  it('a move onto a folder that exists (a merge) cancelled mid-way leaves both sides as they were', async () => {
    await makeBigFolder(home('big'));
    await fs.mkdir(home('to', 'big'), { recursive: true });
    await fs.writeFile(home('to', 'big', 'keep.txt'), 'keep');
    const before = { src: await inventory(home('big')), dst: await inventory(home('to')) };
    const state: { id?: string; cancelled: boolean } = { cancelled: false };
    const listener = (job: Job) => {
      if (job.itemsDone === 0 || state.cancelled) return;
      state.id = job.id;
      state.cancelled = true;
      // The rename failed (ENOTEMPTY), so the entries move one by one: cancelled after the first.
      t.ctx.jobs.here({ id: annId }, job.id)!.cancel();
    };
    t.ctx.jobs.on('progress', listener);
    const job = await runJob(ann, { action: 'rename', items: ['/big'], destination: '/to', override: true });
    t.ctx.jobs.off('progress', listener);
    expect(state.id).toBe(job.id);
    expect(job.state).toBe('cancelled');
    expect(await inventory(home('big'))).toEqual(before.src);
    expect(await inventory(home('to'))).toEqual(before.dst);
  });

  it('DELETE stops a running job and answers once it has cleaned up', async () => {
    await makeBigFolder(home('big'));
    await fs.mkdir(home('to'));
    const before = await inventory(home('big'));
    // Cancelled through the route at the first progress (the totals): before any item moved.
    const answered = new Promise<{ statusCode: number; body: string }>((resolve) =>
      t.ctx.jobs.once('progress', (job) =>
        resolve(t.req(ann, { method: 'DELETE', url: `/api/jobs/${job.id}` })),
      ),
    );
    const res = await startJob(ann, { action: 'rename', items: ['/big'], destination: '/to' });
    expect(res.statusCode).toBe(202);
    const del = await answered;
    expect(del.statusCode).toBe(200);
    const job = JSON.parse(del.body) as Job;
    expect(['cancelled', 'done']).toContain(job.state);
    if (job.state === 'cancelled') {
      expect(await fs.readdir(home('to'))).toEqual([]);
      expect(await inventory(home('big'))).toEqual(before);
    } else {
      expect(await inventory(home('to', 'big'))).toEqual(before);
    }
  });

  it('moves several items into a folder, as the PATCH route would', async () => {
    await makeBigFolder(home('a'));
    await fs.writeFile(home('b.txt'), 'b');
    await fs.mkdir(home('to'));
    const job = await runJob(ann, { action: 'rename', items: ['/a', '/b.txt'], destination: '/to' });
    expect(job.state).toBe('done');
    expect(job.itemsDone).toBe(job.itemsTotal);
    expect((await fs.readdir(home())).sort()).toEqual(['to']);
    expect((await fs.readdir(home('to'))).sort()).toEqual(['a', 'b.txt']);
  });

  it('a clash fails with 409 unless override or rename is asked for', async () => {
    await fs.writeFile(home('x.txt'), 'new');
    await fs.mkdir(home('to'));
    await fs.writeFile(home('to', 'x.txt'), 'old');
    const clash = await runJob(ann, { action: 'copy', items: ['/x.txt'], destination: '/to' });
    expect(clash).toMatchObject({ state: 'failed', status: 409, error: '409 Conflict' });
    expect(await fs.readFile(home('to', 'x.txt'), 'utf8')).toBe('old');

    const renamed = await runJob(ann, {
      action: 'copy',
      items: ['/x.txt'],
      destination: '/to',
      rename: true,
    });
    expect(renamed.state).toBe('done');
    expect(await fs.readFile(home('to', 'x(1).txt'), 'utf8')).toBe('new');

    const replaced = await runJob(ann, {
      action: 'copy',
      items: ['/x.txt'],
      destination: '/to',
      override: true,
    });
    expect(replaced.state).toBe('done');
    expect(await fs.readFile(home('to', 'x.txt'), 'utf8')).toBe('new');
  });

  it('a missing source fails with 404; the source being the destination’s parent with 400', async () => {
    await fs.mkdir(home('to'));
    expect(await runJob(ann, { action: 'copy', items: ['/nope'], destination: '/to' })).toMatchObject({
      state: 'failed',
      status: 404,
    });
    expect(await runJob(ann, { action: 'copy', items: ['/to'], destination: '/to' })).toMatchObject({
      state: 'failed',
      status: 400,
    });
    expect(await fs.readdir(home('to'))).toEqual([]);
  });

  it('another user’s job is not found; their list does not show it', async () => {
    await fs.writeFile(home('x.txt'), 'x');
    const job = await runJob(ann, { action: 'copy', items: ['/x.txt'], destination: '/', rename: true });
    expect(job.state).toBe('done');
    expect((await t.get(bob, `/api/jobs/${job.id}`)).statusCode).toBe(404);
    expect((await t.req(bob, { method: 'DELETE', url: `/api/jobs/${job.id}` })).statusCode).toBe(404);
    expect((await t.get(bob, '/api/jobs')).json()).toEqual([]);
    expect((await t.get(ann, `/api/jobs/${job.id}`)).statusCode).toBe(200);
    expect((await t.get(undefined as unknown as string, `/api/jobs/${job.id}`)).statusCode).toBe(401);
  });

  it('refuses what the PATCH route refuses: permissions, override without modify, rules', async () => {
    const carl = await t.user('carl', { perm: { ...ALL, create: false, modify: false } });
    await fs.writeFile(path.join(t.root, 'carl', 'x.txt'), 'x');
    await fs.mkdir(path.join(t.root, 'carl', 'to'));
    const copy = await startJob(carl, { action: 'copy', items: ['/x.txt'], destination: '/to' });
    expect(copy.statusCode).toBe(403);
    const override = await startJob(carl, {
      action: 'rename',
      items: ['/x.txt'],
      destination: '/to',
      override: true,
    });
    expect(override.statusCode).toBe(403);
    expect(await fs.readdir(path.join(t.root, 'carl', 'to'))).toEqual([]);

    const dora = await t.user('dora', { rules: [deny('/secret')] });
    await fs.mkdir(path.join(t.root, 'dora', 'secret'));
    await fs.writeFile(path.join(t.root, 'dora', 'secret', 's.txt'), 's');
    await fs.mkdir(path.join(t.root, 'dora', 'to'));
    const hidden = await runJob(dora, { action: 'copy', items: ['/secret'], destination: '/to' });
    expect(hidden).toMatchObject({ state: 'failed', status: 403 });
    expect(await fs.readdir(path.join(t.root, 'dora', 'to'))).toEqual([]);
  });

  it('reaches nothing outside the scope, whatever the paths say', async () => {
    await fs.writeFile(path.join(t.outside, 'secret.txt'), 'secret');
    await fs.symlink(t.outside, home('out'));
    await fs.mkdir(home('to'));
    const outsideBefore = await inventory(t.outside);
    for (const payload of [
      { action: 'copy', items: ['/out/secret.txt'], destination: '/to' },
      { action: 'copy', items: ['/../../outside/secret.txt'], destination: '/to' },
      { action: 'copy', items: ['/to'], destination: '/out' },
      { action: 'rename', items: ['/to'], destination: '/../bob' },
    ]) {
      const job = await runJob(ann, payload);
      expect(job.state, JSON.stringify(payload)).toBe('failed');
      expect([400, 403, 404], `${JSON.stringify(payload)} ${job.status} ${job.error}`).toContain(job.status);
    }
    expect(await fs.readdir(home('to'))).toEqual([]);
    expect(await inventory(t.outside)).toEqual(outsideBefore);
    expect(await fs.readdir(path.join(t.root, 'bob'))).toEqual([]);
  });

  it('checks the body against the contract', async () => {
    for (const payload of [
      { action: 'delete', items: ['/a'], destination: '/b' },
      { action: 'copy', items: [], destination: '/b' },
      { action: 'copy', destination: '/b' },
    ]) {
      const res = await startJob(ann, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await t.get(ann, '/api/jobs/x')).statusCode).toBe(400);
  });

  it('the old PATCH route still copies synchronously', async () => {
    await makeBigFolder(home('big'));
    const res = await t.req(ann, {
      method: 'PATCH',
      url: '/api/resources/big?action=copy&destination=%2Fcopy&override=false&rename=false',
    });
    expect(res.statusCode).toBe(200);
    expect(await inventory(home('copy'))).toEqual(await inventory(home('big')));
  });
});

describe('the job registry', () => {
  it('bounds the running jobs of one user, not of others, also when they start at once', async () => {
    const jobs = new JobRegistry(t.ctx.store, t.ctx.log);
    // A caller that is always allowed: the bound is what is tested here.
    const caller = (userId: number) => ({
      userId,
      confinedTo: undefined,
      now: async () => (await t.ctx.store.users.get(1))!,
    });
    const start = (user: number) =>
      jobs.start(caller(user), { action: 'copy', items: ['/a'], destination: '/b' });
    const first = await Promise.allSettled(
      Array.from({ length: MAX_RUNNING_JOBS_PER_USER + 2 }, () => start(annId)),
    );
    const started = first.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(started).toHaveLength(MAX_RUNNING_JOBS_PER_USER);
    await expect(start(annId)).rejects.toThrow(/at most/);
    const other = await start(1);
    started[0]!.finish();
    await started[0]!.ended;
    const again = await start(annId);
    for (const r of [...started.slice(1), other, again]) r.finish();
    await Promise.all([...started, other, again].map((r) => r.ended));
  });
});

describe('archive download progress', () => {
  let port: number;
  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });

  /** Descriptors of this process open on files below the served root. */
  async function openBelowRoot(): Promise<string[]> {
    const out: string[] = [];
    for (const fd of await fs.readdir('/proc/self/fd')) {
      const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
      if (target.startsWith(t.root + '/')) out.push(target);
    }
    return out;
  }

  it('reports bytes of files read against the total, and ends done', async () => {
    await makeBigFolder(home('big'));
    const id = 'download-1234';
    const ended = finished(() => id);
    const res = await t.get(ann, `/api/raw/big?algo=tar&progress=${id}`);
    expect(res.statusCode).toBe(200);
    const job = await ended;
    expect(job).toMatchObject({
      action: 'archive',
      state: 'done',
      bytesTotal: FILES * FILE_SIZE,
      bytesDone: FILES * FILE_SIZE,
    });
    expect((await t.get(bob, `/api/jobs/${id}`)).statusCode).toBe(404);
    // The same id twice is refused while the first is known.
    expect((await t.get(ann, `/api/raw/big?algo=tar&progress=${id}`)).statusCode).toBe(409);
    expect((await t.get(ann, '/api/raw/big?algo=tar&progress=..%2F')).statusCode).toBe(400);
  });

  /** Starts a download over real HTTP and resolves once its first bytes have arrived. */
  function startDownload(url: string): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    return new Promise((resolve, reject) => {
      const req = http.get({ port, host: '127.0.0.1', path: url, headers: { 'x-auth': ann } }, (res) => {
        res.once('data', () => {
          res.pause();
          resolve({ req, res });
        });
      });
      req.on('error', reject);
    });
  }

  it('a client going away stops the reading and lets go of every file', async () => {
    await makeBigFolder(home('big'));
    // Bigger than any socket buffer between the two ends: the server cannot have read it all.
    await fs.writeFile(home('big', 'huge.bin'), Buffer.alloc(48 * 1024 * 1024, 1));
    const id = 'download-gone';
    const ended = finished(() => id);
    const { req } = await startDownload(`/api/raw/big?algo=tar&progress=${id}`);
    req.destroy();
    const job = await ended;
    expect(job.state).toBe('cancelled');
    expect(job.bytesDone).toBeLessThan(job.bytesTotal);
    expect(await openBelowRoot()).toEqual([]);
  });

  it('a user runs a bounded number of jobs at once (429 beyond), others are not held back', async () => {
    await makeBigFolder(home('big'));
    await fs.writeFile(home('big', 'huge.bin'), Buffer.alloc(48 * 1024 * 1024, 1));
    const ids = Array.from({ length: MAX_RUNNING_JOBS_PER_USER }, (_, i) => `download-held-${i}`);
    const ended = ids.map((id) => finished(() => id));
    // Downloads whose clients stopped reading: each stays running.
    const held = [];
    for (const id of ids) held.push(await startDownload(`/api/raw/big?algo=tar&progress=${id}`));
    expect((await t.get(ann, '/api/jobs')).json()).toHaveLength(MAX_RUNNING_JOBS_PER_USER);
    const refused = await startJob(ann, { action: 'copy', items: ['/big'], destination: '/', rename: true });
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain(`at most ${MAX_RUNNING_JOBS_PER_USER} jobs`);
    await fs.writeFile(path.join(t.root, 'bob', 'b.txt'), 'b');
    const other = await runJob(bob, { action: 'copy', items: ['/b.txt'], destination: '/', rename: true });
    expect(other.state).toBe('done');
    for (const { req } of held) req.destroy();
    await Promise.all(ended);
    expect((await t.get(ann, '/api/jobs')).json()).toEqual([]);
    expect(await fs.readdir(home())).toEqual(['big']);
  });

  it('cancelling the job cuts the download', async () => {
    await makeBigFolder(home('big'));
    await fs.writeFile(home('big', 'huge.bin'), Buffer.alloc(48 * 1024 * 1024, 1));
    const id = 'download-cancel';
    const { res } = await startDownload(`/api/raw/big?algo=zip&progress=${id}`);
    const cut = new Promise<void>((resolve) => {
      res.once('close', () => resolve());
      res.once('error', () => resolve());
      res.resume();
    });
    const del = await t.req(ann, { method: 'DELETE', url: `/api/jobs/${id}` });
    expect(del.statusCode).toBe(200);
    expect((del.json() as Job).state).toBe('cancelled');
    await cut;
    expect(res.complete).toBe(false);
    expect(await openBelowRoot()).toEqual([]);
  });
});
