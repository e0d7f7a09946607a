import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/config-error.js';
import { loadConfig } from '../src/config/load.js';
import { serverRecordFromConfig } from '../src/config/server-record.js';
import { BIG_FOLDER_BYTES } from '../src/http/heavy.js';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Heavy work is shared fairly: sixteen parallel listings of a 100,000-entry folder by one user
 * took another user's 11-byte download from 4 ms to 3 s. Now each user runs `heavyPerUser` heavy
 * requests at once (big listings, PROPFIND of big folders, searches, archives) and queues
 * `heavyQueue` more; past that the answer is 429 with Retry-After. Another user's requests never
 * wait for them.
 *
 * Nothing here is timed: ann's turn is held by an archive whose client stopped reading (the
 * response cannot end), her queue is seen through the scheduler's `queued` event, and what is
 * asserted is which requests are answered, not how fast.
 */
let t: FilesApp;
let ann: string;
let annId: number;
let bob: string;
let port: number;

beforeAll(async () => {
  t = await startFilesApp({ heavyPerUser: 1, heavyQueue: 1 });
  ann = await t.user('ann');
  annId = (await t.ctx.store.users.getByUsername('ann'))!.id;
  bob = await t.user('bob');
  for (const user of ['ann', 'bob']) {
    const home = path.join(t.root, user);
    await fs.writeFile(path.join(home, 'small.txt'), 'hello world');
    await fs.mkdir(path.join(home, 'few'));
    await fs.writeFile(path.join(home, 'few', 'a.txt'), 'a');
  }
  // A folder big enough on the disk to be listed as heavy work.
  const big = path.join(t.root, 'ann', 'big');
  await fs.mkdir(big);
  // 16,000 names: enough on tmpfs too, whose folders grow by 20 bytes an entry. Made 500 at once.
  const names = Array.from({ length: 16_000 }, (_, i) => `entry-${String(i).padStart(8, '0')}.txt`);
  for (let i = 0; i < names.length; i += 500) {
    await Promise.all(names.slice(i, i + 500).map((name) => fs.writeFile(path.join(big, name), '')));
  }
  await fs.mkdir(path.join(t.root, 'ann', 'archive'));
  // Bigger than any socket buffer between the two ends: an unread download cannot end.
  await fs.writeFile(path.join(t.root, 'ann', 'archive', 'huge.bin'), Buffer.alloc(48 * 1024 * 1024, 1));
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

/** Starts ann's archive download over real HTTP; resolves once it runs (its first bytes came). */
function heldDownload(): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: '/api/raw/archive?algo=tar', headers: { 'x-auth': ann } },
      (res) => {
        res.once('data', () => {
          res.pause();
          resolve(req);
        });
      },
    );
    req.on('error', reject);
  });
}

/** The next time the scheduler queues a heavy request of `owner` (or one leaves the queue). */
function next(event: 'queued' | 'left', owner: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (who: string) => {
      if (who !== owner) return;
      t.ctx.heavy.off(event, listener);
      resolve();
    };
    t.ctx.heavy.on(event, listener);
  });
}
const queuedFor = (owner: string) => next('queued', owner);

const dav = (token: 'ann' | 'bob', url: string, depth: string) =>
  t.app.inject({
    method: 'PROPFIND',
    url,
    headers: {
      host: 'dav.test',
      depth,
      authorization: 'Basic ' + Buffer.from(`${token}:${PASSWORD}`).toString('base64'),
    },
  });

describe('heavy work of one user', () => {
  it('is bounded and queued per user: another user’s requests are admitted while hers wait', async () => {
    expect((await fs.stat(path.join(t.root, 'ann', 'big'))).size).toBeGreaterThanOrEqual(BIG_FOLDER_BYTES);
    const owner = `user:${annId}`;
    const running = await heldDownload();
    expect(t.ctx.heavy.runningCount(owner)).toBe(1);

    // Her next heavy request waits in her queue (of one).
    const queued = queuedFor(owner);
    const waiting = t.get(ann, '/api/search/?query=entry-00000001');
    await queued;
    expect(t.ctx.heavy.waitingCount(owner)).toBe(1);

    // Past her queue: 429 with Retry-After, at once, for every kind of heavy request.
    for (const res of [
      await t.get(ann, '/api/search/?query=small'),
      await t.get(ann, '/api/resources/big/'),
      await t.get(ann, '/api/raw/few?algo=zip'),
      await t.get(ann, '/api/resources/recursive/few/'),
      await dav('ann', '/dav/big/', '1'),
    ]) {
      expect(res.statusCode, res.body).toBe(429);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.body).toContain('heavy requests (big listings, searches, archives) run 1 at a time');
    }
    // Her small requests are not heavy work: answered as ever.
    expect((await t.get(ann, '/api/resources/few/')).statusCode).toBe(200);
    expect((await t.get(ann, '/api/raw/small.txt')).body).toBe('hello world');
    expect((await dav('ann', '/dav/big/', '0')).statusCode).toBe(207);

    // Another user's heavy and small requests go through while hers wait.
    const search = await t.get(bob, '/api/search/?query=small');
    expect(search.statusCode).toBe(200);
    expect(search.body).toContain('small.txt');
    expect((await t.get(bob, '/api/raw/few?algo=zip')).statusCode).toBe(200);
    expect((await t.get(bob, '/api/raw/small.txt')).body).toBe('hello world');
    expect(t.ctx.heavy.waitingCount(owner)).toBe(1);

    // Once her download ends, her queued search runs and is answered.
    running.destroy();
    const answered = await waiting;
    expect(answered.statusCode).toBe(200);
    expect(answered.body).toContain('entry-00000001.txt');
    expect((await t.get(ann, '/api/resources/big/')).statusCode).toBe(200);
    expect([t.ctx.heavy.runningCount(), t.ctx.heavy.waitingCount()]).toEqual([0, 0]);
  });

  it('leaves the queue when its client goes away', async () => {
    const owner = `user:${annId}`;
    const running = await heldDownload();
    const queued = queuedFor(owner);
    const req = http.get({
      port,
      host: '127.0.0.1',
      path: '/api/search/?query=x',
      headers: { 'x-auth': ann },
    });
    req.on('error', () => undefined);
    await queued;
    expect(t.ctx.heavy.waitingCount(owner)).toBe(1);
    const left = next('left', owner);
    req.destroy();
    await left;
    expect(t.ctx.heavy.waitingCount(owner)).toBe(0);
    // Her queue has room again while the download still runs.
    const queuedAgain = queuedFor(owner);
    const again = t.get(ann, '/api/search/?query=small');
    await queuedAgain;
    running.destroy();
    expect((await again).statusCode).toBe(200);
  });
});

describe('the heavy work options', () => {
  it('come from flags and FB_* variables, are saved in the server record, and are checked', async () => {
    // A folder of its own: no config file of another test is found.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-heavy-config-'));
    const places = { cwd: dir, home: dir, systemDir: path.join(dir, 'etc') };
    const config = loadConfig(['--heavyPerUser', '3'], { FB_HEAVY_QUEUE: '0' }, places);
    expect(config).toMatchObject({ heavyPerUser: 3, heavyQueue: 0 });
    expect(serverRecordFromConfig(config)).toMatchObject({ heavyPerUser: 3, heavyQueue: 0 });
    expect(loadConfig([], {}, places)).toMatchObject({ heavyPerUser: 1, heavyQueue: 32 });
    expect(() => loadConfig(['--heavyPerUser', '0'], {}, places)).toThrow(ConfigError);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
