import fs from 'node:fs/promises';
import path from 'node:path';
import type { Job } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renameWindow, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * A WebDAV lock granted while another user's write is already under way holds that write's last
 * step back: the write checked the lock when it began, and checks it again just before its rename
 * (a red-team finding: a slow PUT or POST begun before the LOCK replaced the locked file).
 *
 * The window is reached without a clock: the app's `beforeReplace` seam runs just before the
 * rename, and the lock is granted there, as a LOCK request answered meanwhile would be.
 */
let t: FilesApp;
let bob: string;
let annId: number;
const seam = renameWindow();

beforeEach(async () => {
  t = await startFilesApp({}, seam.build);
  await t.user('ann', { scope: '/shared' });
  bob = await t.user('bob', { scope: '/shared' });
  annId = (await t.ctx.store.users.getByUsername('ann'))!.id;
  await fs.writeFile(path.join(t.root, 'shared/f.txt'), 'ann’s locked text');
});

afterEach(async () => {
  seam.clear();
  await t?.close();
});

const lockByAnn = (place = '/shared/f.txt') =>
  t.ctx.store.davLocks.create({
    token: 'opaquelocktoken:late-lock',
    rootId: 'default',
    path: place,
    userId: annId,
    scope: 'exclusive',
    depth: '0',
    owner: '',
    timeout: 600,
    expiresAt: Date.now() + 600_000,
    createdAt: Date.now(),
  });

describe('a lock granted while a write is under way', () => {
  it.each([
    ['POST ?override=true', 'POST', '/api/resources/f.txt?override=true'],
    ['PUT', 'PUT', '/api/resources/f.txt'],
  ] as const)(
    'stops a %s at its rename: 423, the locked file as it was, no staging file',
    async (_n, method, url) => {
      seam.next(() => lockByAnn());
      const res = await t.req(bob, { method, url, payload: 'bob’s overwrite' });
      expect(res.statusCode, res.body).toBe(423);
      expect(await fs.readFile(path.join(t.root, 'shared/f.txt'), 'utf8')).toBe('ann’s locked text');
      expect(await fs.readdir(path.join(t.root, 'shared'))).toEqual(['f.txt']);
    },
  );

  it('stops a copy job over the locked file at its rename, the file as it was', async () => {
    await fs.mkdir(path.join(t.root, 'shared/dest'));
    await fs.writeFile(path.join(t.root, 'shared/dest/big.bin'), 'ann’s locked copy');
    await fs.writeFile(path.join(t.root, 'shared/big.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
    let locking: Promise<void> | undefined;
    const onProgress = (job: Job) => {
      if (job.bytesDone > 0) locking ??= lockByAnn('/shared/dest/big.bin');
    };
    const ended = new Promise<Job>((resolve) => t.ctx.jobs.once('finished', resolve));
    t.ctx.jobs.on('progress', onProgress);
    try {
      const res = await t.req(bob, {
        method: 'POST',
        url: '/api/jobs',
        payload: { action: 'copy', items: ['/big.bin'], destination: '/dest', override: true },
      });
      expect(res.statusCode, res.body).toBe(202);
      const job = await ended;
      await locking;
      expect(job).toMatchObject({ state: 'failed', status: 423 });
    } finally {
      t.ctx.jobs.off('progress', onProgress);
    }
    expect(await fs.readFile(path.join(t.root, 'shared/dest/big.bin'), 'utf8')).toBe('ann’s locked copy');
    expect(await fs.readdir(path.join(t.root, 'shared/dest'))).toEqual(['big.bin']);
  });

  it('lets the write through when no lock came meanwhile', async () => {
    const res = await t.req(bob, { method: 'PUT', url: '/api/resources/f.txt', payload: 'bob’s text' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'shared/f.txt'), 'utf8')).toBe('bob’s text');
  });
});
