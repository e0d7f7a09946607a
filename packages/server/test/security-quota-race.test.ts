import fs from 'node:fs/promises';
import path from 'node:path';
import type { Usage } from '@filebrowser/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { serverPaths } from '../src/files/access/private.js';
import { ALL, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * A replacing write counts the file it replaces as room. That room must be what the final rename
 * really replaced, not what stood at the destination when the request came: moving the file away
 * while the new one is written used to leave both on the disk, the ledger recording the change it
 * expected (5.4 MB stored under a 1 MB quota, `/api/usage` saying 0.9 MB).
 *
 * The window is reached without a clock: the app's `beforeReplace` seam (a build option no
 * request can reach) runs between the write's last quota check and its rename, and the test
 * changes the destination there through the API, as a second request of the attacker would.
 */
const QUOTA = 10_000;
const KEPT = 8_800;

let t: FilesApp;
let bob: string;
/** What the next replacing write meets just before its rename (once). */
let meanwhile: (() => Promise<void>) | undefined;

async function start(): Promise<void> {
  t = await startFilesApp(
    {},
    {
      beforeReplace: async () => {
        const act = meanwhile;
        meanwhile = undefined;
        await act?.();
      },
    },
  );
  bob = await t.user('bob', { quota: QUOTA });
  const res = await t.req(bob, { method: 'POST', url: '/api/resources/keep.bin', payload: bytes(KEPT) });
  expect(res.statusCode, res.body).toBe(200);
}

afterEach(async () => {
  meanwhile = undefined;
  await t?.close();
});

const bytes = (n: number, fill = 'x') => Buffer.alloc(n, fill);

const usage = async (): Promise<number> => {
  const res = await t.get(bob, '/api/usage/');
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Usage).used;
};

/** Every entry below bob's scope with its size (folders 0): staging files would show here. */
async function onDisk(): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  const dir = path.join(t.root, 'bob');
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(e.parentPath, e.name);
    found[path.relative(dir, full)] = e.isFile() ? (await fs.stat(full)).size : 0;
  }
  return found;
}

const bytesOnDisk = async () => Object.values(await onDisk()).reduce((a, b) => a + b, 0);

/** The attacker's second request: moves the file being replaced out of the way. */
const moveAway = async () => {
  const res = await t.req(bob, {
    method: 'PATCH',
    url: '/api/resources/keep.bin?action=rename&destination=%2Fmoved.bin',
  });
  expect(res.statusCode, res.body).toBe(200);
};

const webdavPut = (p: string, body: Buffer) =>
  t.app.inject({
    method: 'PUT',
    url: `/dav${p}`,
    headers: {
      host: 'dav.test',
      authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64'),
    },
    payload: body,
  });

async function tusUpload(p: string, body: Buffer) {
  const created = await t.req(bob, {
    method: 'POST',
    url: `/api/tus${p}?override=true`,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': String(body.length) },
  });
  expect(created.statusCode, created.body).toBe(201);
  return t.req(bob, {
    method: 'PATCH',
    url: `/api/tus${p}`,
    headers: {
      'tus-resumable': '1.0.0',
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    },
    payload: body,
  });
}

const writes = {
  'PUT /api/resources': () =>
    t.req(bob, { method: 'PUT', url: '/api/resources/keep.bin', payload: bytes(KEPT, 'y') }),
  'POST /api/resources?override=true': () =>
    t.req(bob, { method: 'POST', url: '/api/resources/keep.bin?override=true', payload: bytes(KEPT, 'y') }),
  'WebDAV PUT': () => webdavPut('/keep.bin', bytes(KEPT, 'y')),
  'tus completion': () => tusUpload('/keep.bin', bytes(KEPT, 'y')),
};

describe('a replacing write raced by a move of the file it replaces', () => {
  it.each(Object.keys(writes))(
    '%s: counts only what the rename replaced, so disk and /api/usage stay within the quota',
    async (name) => {
      await start();
      meanwhile = moveAway;
      const res = await writes[name as keyof typeof writes]();
      // Nothing is replaced any more: the new 8.8 kB no longer fit beside the moved 8.8 kB.
      expect(res.statusCode, res.body).toBe(507);
      expect(res.body).toContain('Quota exceeded: 1.2 kB left of 10 kB');
      expect(meanwhile).toBeUndefined();
      // The moved file is whole, the new one left nothing behind (no staging file).
      expect(await onDisk()).toEqual({ 'moved.bin': KEPT });
      expect(await fs.readFile(path.join(t.root, 'bob', 'moved.bin'))).toEqual(bytes(KEPT));
      expect(await usage()).toBe(KEPT);
      expect(await t.ctx.store.uploads.all()).toEqual([]);
      expect(await fs.readdir(serverPaths(t.ctx.config).uploadsDir).catch(() => [])).toEqual([]);
      // And the count is the disk's: a recount finds the same.
      expect((await t.get(bob, '/api/usage/?recount=true')).json()).toMatchObject({ used: KEPT });
    },
  );

  it('a write that still fits goes in, counted by what it really replaced', async () => {
    await start();
    // A smaller file is moved in place of the one measured: the new file replaces that one.
    meanwhile = async () => {
      await moveAway();
      const small = await t.req(bob, {
        method: 'POST',
        url: '/api/resources/small.bin',
        payload: bytes(100, 's'),
      });
      expect(small.statusCode, small.body).toBe(200);
      const moved = await t.req(bob, {
        method: 'PATCH',
        url: '/api/resources/small.bin?action=rename&destination=%2Fkeep.bin',
      });
      expect(moved.statusCode, moved.body).toBe(200);
    };
    // 1 kB over the 8.8 kB file measured; in truth over the 100 B one: it adds 900 B, which fit.
    const res = await t.req(bob, {
      method: 'PUT',
      url: '/api/resources/keep.bin',
      payload: bytes(1_000, 'y'),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await onDisk()).toEqual({ 'keep.bin': 1_000, 'moved.bin': KEPT });
    expect(await bytesOnDisk()).toBe(KEPT + 1_000);
    expect(await usage()).toBe(KEPT + 1_000);
    expect((await t.get(bob, '/api/usage/?recount=true')).json()).toMatchObject({ used: KEPT + 1_000 });
  });

  it('a folder made where the file stood is not replaced: 409, and nothing changes', async () => {
    await start();
    meanwhile = async () => {
      await moveAway();
      const made = await t.req(bob, { method: 'POST', url: '/api/resources/keep.bin/' });
      expect(made.statusCode, made.body).toBe(200);
    };
    const res = await writes['PUT /api/resources']();
    expect(res.statusCode, res.body).toBe(409);
    expect(await onDisk()).toEqual({ 'moved.bin': KEPT, 'keep.bin': 0 });
    expect(await usage()).toBe(KEPT);
  });
});

describe('a write over nothing raced by a file appearing at its destination', () => {
  it('measures the file that appeared and replaces exactly it', async () => {
    await start();
    // The name is free when the request comes: 1.2 kB fit (1.2 kB left).
    meanwhile = async () => {
      const moved = await t.req(bob, {
        method: 'PATCH',
        url: '/api/resources/keep.bin?action=rename&destination=%2Fnew.bin',
      });
      expect(moved.statusCode, moved.body).toBe(200);
    };
    const res = await t.req(bob, {
      method: 'POST',
      url: '/api/resources/new.bin?override=true',
      payload: bytes(1_200, 'n'),
    });
    // It replaced the 8.8 kB file moved there: the count goes down by what really went.
    expect(res.statusCode, res.body).toBe(200);
    expect(await onDisk()).toEqual({ 'new.bin': 1_200 });
    expect(await usage()).toBe(1_200);
    expect((await t.get(bob, '/api/usage/?recount=true')).json()).toMatchObject({ used: 1_200 });
  });
});

describe('a copy whose source grows while it is copied', () => {
  it('is checked byte by byte past what was measured: 507, and nothing of it is left', async () => {
    await start();
    // 8.8 kB kept of 10 kB: a copy of 2 × 500 B fits, as measured.
    for (const name of ['a.bin', 'b.bin']) {
      const res = await t.req(bob, {
        method: 'POST',
        url: `/api/resources/src/${name}`,
        payload: bytes(500),
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    // Once the first file is copied, both sources grow (the one still to come, whichever it is).
    const home = path.join(t.root, 'bob', 'src');
    meanwhile = async () => {
      for (const name of ['a.bin', 'b.bin']) await fs.appendFile(path.join(home, name), bytes(5_000));
    };
    const copy = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/src?action=copy&destination=%2Fcopy',
    });
    expect(copy.statusCode, copy.body).toBe(507);
    expect(copy.body).toContain('Quota exceeded');
    expect(Object.keys(await onDisk()).filter((p) => p.startsWith('copy'))).toEqual([]);
  });
});

describe('a folder merged into a folder with a quota while its source grows', () => {
  it('is checked past what was measured, entry by entry: the quota holds, and what moved is counted', async () => {
    await start();
    // 8.8 kB kept of bob's 10 kB. An administrator merges /src (outside bob's folder) into his
    // /bob/src: one file and eight folders, measured at 500 B.
    const admin = await t.user('root', { scope: '/', perm: { ...ALL, admin: true } });
    const folders = Array.from({ length: 8 }, (_, i) => `d${i}`);
    const src = path.join(t.root, 'src');
    await fs.mkdir(src);
    await fs.writeFile(path.join(src, '0.bin'), bytes(500));
    for (const name of folders) {
      await fs.mkdir(path.join(src, name));
      await fs.mkdir(path.join(t.root, 'bob', 'src', name), { recursive: true });
    }
    // When the file moves, 3 kB go into every source folder (those not merged yet ride along).
    meanwhile = async () => {
      for (const name of folders) await fs.writeFile(path.join(src, name, 'late.bin'), bytes(3_000));
    };
    const merge = await t.req(admin, {
      method: 'PATCH',
      url: '/api/resources/src?action=rename&destination=%2Fbob%2Fsrc&override=true',
    });
    expect([200, 507], merge.body).toContain(merge.statusCode);
    const stored = Object.values(await onDisk()).reduce((a, b) => a + b, 0);
    expect(stored).toBeLessThanOrEqual(QUOTA);
    expect(await usage()).toBe(stored);
  });
});
