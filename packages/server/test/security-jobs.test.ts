import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Job, NewApiToken } from '@filebrowser/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { revokeApiToken } from '../src/auth/api-tokens.js';
import { deleteAccount } from '../src/auth/accounts.js';
import { ALL, deny, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Work that outlives its request acts as its caller is now, not as they were when it started. A
 * copy job kept writing 378–588 of 600 files after its token was revoked and its user deleted.
 * Now every job asks its caller again (the session or token still alive, the user still there,
 * the permissions and the scope and rules as they were) after each file and each mebibyte, and
 * a refusal stops it before its next entry, cleaned up as a cancel is, the job saying why.
 *
 * The change is made from the registry's own `progress` event, synchronously, through the
 * services the routes use (logout, token revocation, account deletion, the user store): the job
 * is then exactly after its third file, whatever the machine's speed.
 */
const ITEMS = 12;

let t: FilesApp;

beforeAll(async () => {
  t = await startFilesApp();
});
afterAll(() => t.close());

const home = (...p: string[]) => path.join(t.root, 'ann', ...p);
const names = Array.from({ length: ITEMS }, (_, i) => `f${String(i).padStart(2, '0')}.bin`);

interface Started {
  /** Headers of the caller: a session token or an API token. */
  headers: Record<string, string>;
  sessionId?: string;
  token?: NewApiToken;
  userId: number;
}

/** A fresh user `ann` with twelve files in /src and an empty /dest, signed in either way. */
async function setUp(as: 'session' | 'apiToken'): Promise<Started> {
  const old = await t.ctx.store.users.getByUsername('ann');
  if (old) await deleteAccount(t.ctx, old.id);
  await fs.rm(home(), { recursive: true, force: true });
  const session = await t.user('ann', { perm: { ...ALL } });
  const userId = (await t.ctx.store.users.getByUsername('ann'))!.id;
  await fs.mkdir(home('src'), { recursive: true });
  await fs.mkdir(home('dest'));
  for (const [i, name] of names.entries()) await fs.writeFile(home('src', name), Buffer.alloc(4096, i));
  const sessionId = (
    JSON.parse(Buffer.from(session.split('.')[1]!, 'base64url').toString()) as { sid: string }
  ).sid;
  if (as === 'session') return { headers: { 'x-auth': session }, sessionId, userId };
  const made = await t.req(session, {
    method: 'POST',
    url: '/api/tokens',
    payload: { name: 'sync', expiresInDays: 0, readOnly: false, current_password: PASSWORD },
  });
  expect(made.statusCode, made.body).toBe(201);
  const token = made.json() as NewApiToken;
  return { headers: { authorization: `Bearer ${token.secret}` }, token, userId };
}

/**
 * Starts a job and calls `act` once its `progress` says `itemsDone >= after` (and `bytesDone >=
 * bytes`); resolves with the job as it ended. The job is known by its items, not by the id its
 * answer brings: it runs before that answer arrives. One job runs at a time in this file.
 */
async function jobStoppedBy(
  who: Started,
  payload: { items: string[] },
  after: number,
  act: () => unknown,
  bytes = 0,
): Promise<Job> {
  const ours = (job: Job) => job.items.join('\0') === payload.items.join('\0');
  let acted: Promise<unknown> | undefined;
  const onProgress = (job: Job) => {
    if (!ours(job) || acted || job.itemsDone < after || job.bytesDone < bytes) return;
    acted = Promise.resolve(act());
  };
  const ended = new Promise<Job>((resolve) => {
    const onFinished = (job: Job) => {
      if (!ours(job)) return;
      t.ctx.jobs.off('finished', onFinished);
      resolve(job);
    };
    t.ctx.jobs.on('finished', onFinished);
  });
  t.ctx.jobs.on('progress', onProgress);
  try {
    const res = await t.req(undefined, { method: 'POST', url: '/api/jobs', payload, headers: who.headers });
    expect(res.statusCode, res.body).toBe(202);
    const job = await ended;
    await acted;
    return job;
  } finally {
    t.ctx.jobs.off('progress', onProgress);
  }
}

const copyAll = { action: 'copy', items: names.map((n) => `/src/${n}`), destination: '/dest' };
const moveAll = { action: 'rename', items: names.map((n) => `/src/${n}`), destination: '/dest' };
const user = async (id: number) => (await t.ctx.store.users.get(id))!;

const changes: Array<{
  what: string;
  as: 'session' | 'apiToken';
  act: (who: Started) => unknown;
  status: number;
  error: string;
}> = [
  {
    what: 'its session ends (logout)',
    as: 'session',
    act: (who) => t.ctx.auth.logout(who.sessionId!, who.userId),
    status: 401,
    error: '401 Unauthorized (the session it was started in has ended)',
  },
  {
    what: 'its API token is revoked',
    as: 'apiToken',
    act: async (who) => await revokeApiToken(t.ctx, await user(who.userId), who.token!.id),
    status: 401,
    error: '401 Unauthorized (the API token was revoked)',
  },
  {
    what: 'its user is deleted',
    as: 'apiToken',
    act: async (who) => await deleteAccount(t.ctx, who.userId),
    status: 401,
    error: '401 Unauthorized (the API token was revoked)',
  },
  {
    what: 'its user (signed in) is deleted',
    as: 'session',
    act: async (who) => await deleteAccount(t.ctx, who.userId),
    status: 401,
    error: '401 Unauthorized (the user who started it no longer exists)',
  },
  {
    what: 'the permission it needs is withdrawn (tokens survive that)',
    as: 'apiToken',
    act: async (who) =>
      await t.ctx.store.users.update({ ...(await user(who.userId)), perm: { ...ALL, create: false } }),
    status: 403,
    error: '403 Forbidden (this needs the create permission)',
  },
  {
    what: 'the scope of its user changes',
    as: 'apiToken',
    act: async (who) => await t.ctx.store.users.update({ ...(await user(who.userId)), scope: '/elsewhere' }),
    status: 403,
    error: '403 Forbidden (the user’s scope or rules changed since it started)',
  },
  {
    what: 'a rule is added to its user',
    as: 'session',
    act: async (who) =>
      await t.ctx.store.users.update({ ...(await user(who.userId)), rules: [deny('/dest')] }),
    status: 403,
    error: '403 Forbidden (the user’s scope or rules changed since it started)',
  },
];

describe('a copy job stops within one item when', () => {
  it.each(changes)('$what', async ({ as, act, status, error }) => {
    const who = await setUp(as);
    const job = await jobStoppedBy(who, copyAll, 3, () => act(who));
    expect(job).toMatchObject({ state: 'failed', status, error, itemsDone: 3 });
    // Exactly the three files copied before the change, whole; no staging file; nothing after.
    expect((await fs.readdir(home('dest'))).sort()).toEqual(names.slice(0, 3));
    for (const name of names.slice(0, 3)) {
      expect(await fs.readFile(home('dest', name))).toEqual(await fs.readFile(home('src', name)));
    }
    expect((await fs.readdir(home('src'))).sort()).toEqual(names);
  });
});

describe('a renewal of the session', () => {
  it('carries the job over: it ends done, while the old token no longer works', async () => {
    const who = await setUp('session');
    const auth = await t.ctx.auth.verify(who.headers['x-auth']);
    let renewed: Promise<string> | undefined;
    const job = await jobStoppedBy(who, copyAll, 3, () => {
      renewed = t.ctx.auth.renew(auth);
    });
    expect(job).toMatchObject({ state: 'done', itemsDone: ITEMS });
    expect((await fs.readdir(home('dest'))).sort()).toEqual(names);
    const fresh = await renewed!;
    expect((await t.get(who.headers['x-auth']!, '/api/resources/')).statusCode).toBe(401);
    expect((await t.get(fresh, '/api/resources/')).statusCode).toBe(200);
  });
});

describe('a move job', () => {
  it('stops within one item when its API token is revoked: the rest stays where it was', async () => {
    const who = await setUp('apiToken');
    const owner = await user(who.userId);
    const job = await jobStoppedBy(who, moveAll, 0, () => revokeApiToken(t.ctx, owner, who.token!.id));
    expect(job).toMatchObject({ state: 'failed', status: 401 });
    // Renames report no progress of their own: the totals' event came first, so nothing moved.
    expect(await fs.readdir(home('dest'))).toEqual([]);
    expect((await fs.readdir(home('src'))).sort()).toEqual(names);
  });
});

describe('inside one large file', () => {
  it('stops between two reads, leaving no partial file', async () => {
    const who = await setUp('session');
    await fs.writeFile(home('src', 'large.bin'), Buffer.alloc(6 * 1024 * 1024, 7));
    const payload = { action: 'copy', items: ['/src/large.bin'], destination: '/dest' };
    const job = await jobStoppedBy(who, payload, 0, () => t.ctx.auth.logout(who.sessionId!, who.userId), 1);
    expect(job).toMatchObject({ state: 'failed', status: 401, bytesDone: 1024 * 1024 });
    expect(await fs.readdir(home('dest'))).toEqual([]);
  });
});

describe('an archive download followed as a job', () => {
  let port: number;
  beforeEach(async () => {
    if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });

  it('is cut before its next member once the session ends', async () => {
    const who = await setUp('session');
    await fs.writeFile(home('src', 'huge.bin'), Buffer.alloc(48 * 1024 * 1024, 1));
    const id = 'download-revoked';
    let acted: Promise<void> | undefined;
    const onProgress = (job: Job) => {
      if (job.id !== id || acted || job.itemsDone < 2) return;
      acted = t.ctx.auth.logout(who.sessionId!, who.userId);
    };
    t.ctx.jobs.on('progress', onProgress);
    const ended = new Promise<Job>((resolve) => {
      const onFinished = (job: Job) => {
        if (job.id !== id) return;
        t.ctx.jobs.off('finished', onFinished);
        resolve(job);
      };
      t.ctx.jobs.on('finished', onFinished);
    });
    // The server cuts the connection: an error or a close before the end, either way incomplete.
    const complete = await new Promise<boolean>((resolve) => {
      const req = http.get(
        { port, host: '127.0.0.1', path: `/api/raw/src?algo=tar&progress=${id}`, headers: who.headers },
        (res) => {
          res.on('data', () => undefined);
          res.once('close', () => resolve(res.complete));
          res.once('error', () => resolve(false));
        },
      );
      req.on('error', () => resolve(false));
    });
    const job = await ended;
    await acted;
    t.ctx.jobs.off('progress', onProgress);
    expect(complete).toBe(false);
    expect(job).toMatchObject({ state: 'failed', status: 401 });
    expect(job.bytesDone).toBeLessThan(job.bytesTotal);
  });
});

describe('a share link’s archive', () => {
  let port: number;
  beforeEach(async () => {
    if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });

  /**
   * Downloads the link's archive, reading until the first bytes came, then pausing (the server
   * waits on the socket meanwhile, mid-way through the first member) while `act` changes things;
   * answers whether the download was complete and how many bytes came.
   */
  const download = (hash: string, act: () => Promise<void>) =>
    new Promise<{ complete: boolean; bytes: number }>((resolve, reject) => {
      let bytes = 0;
      let acted = false;
      const req = http.get({ port, host: '127.0.0.1', path: `/api/public/dl/${hash}?algo=tar` }, (res) => {
        expect(res.statusCode).toBe(200);
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (acted) return;
          acted = true;
          res.pause();
          act().then(() => res.resume(), reject);
        });
        res.once('close', () => resolve({ complete: res.complete, bytes }));
        res.once('error', () => resolve({ complete: false, bytes }));
      });
      req.on('error', () => resolve({ complete: false, bytes }));
    });

  const shareOfSrc = async (): Promise<string> => {
    const who = await setUp('session');
    for (const name of ['a.bin', 'b.bin', 'c.bin']) {
      await fs.writeFile(home('src', name), Buffer.alloc(16 * 1024 * 1024, 2));
    }
    const made = await t.req(who.headers['x-auth']!, { method: 'POST', url: '/api/share/src/', payload: {} });
    expect(made.statusCode, made.body).toBe(200);
    return (made.json() as { hash: string }).hash;
  };
  const total = 3 * 16 * 1024 * 1024 + ITEMS * 4096;

  it('is whole while nothing changes (control)', async () => {
    const hash = await shareOfSrc();
    const got = await download(hash, async () => undefined);
    expect(got.complete).toBe(true);
    expect(got.bytes).toBeGreaterThan(total);
  });

  it('is cut before its next member once the link is deleted', async () => {
    const hash = await shareOfSrc();
    const got = await download(hash, async () => {
      await t.ctx.store.shares.delete(hash);
    });
    expect(got.complete).toBe(false);
    expect(got.bytes).toBeLessThan(total);
  });

  it('is cut before its next member once the owner may no longer share', async () => {
    const hash = await shareOfSrc();
    const got = await download(hash, async () => {
      const ann = (await t.ctx.store.users.getByUsername('ann'))!;
      await t.ctx.store.users.update({ ...ann, perm: { ...ann.perm, share: false } });
    });
    expect(got.complete).toBe(false);
    expect(got.bytes).toBeLessThan(total);
  });
});
