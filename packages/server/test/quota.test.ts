import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TrashItem, Usage, User } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serverPaths } from '../src/files/access/private.js';
import { stagingName } from '../src/files/access/staging-names.js';
import { quotaLedgerOf } from '../src/files/change/quota.js';
import { ALL, PASSWORD, renameWindow, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Quotas: every write path refuses what does not fit with 507 and leaves nothing, the
 * count follows every write without a walk, and parallel writes cannot pass the check together.
 */
let t: FilesApp;
let bob: string; // scope /bob, quota 10 kB
let admin: string; // the whole root, no quota

const QUOTA = 10_000;
const seam = renameWindow();

beforeEach(async () => {
  t = await startFilesApp({}, seam.build);
  bob = await t.user('bob', { quota: QUOTA });
  admin = await t.user('root', { scope: '/', perm: { ...ALL, admin: true } });
});
afterEach(async () => {
  seam.clear();
  await t.close();
});

const bytes = (n: number, fill = 'x') => Buffer.alloc(n, fill);
const file = (...p: string[]) => path.join(t.root, ...p);
const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );
const upload = (token: string, p: string, body: Buffer, query = '') =>
  t.req(token, { method: 'POST', url: `/api/resources${p}${query}`, payload: body });
const put = (token: string, p: string, body: Buffer) =>
  t.req(token, { method: 'PUT', url: `/api/resources${p}`, payload: body });
const del = (token: string, p: string) => t.req(token, { method: 'DELETE', url: `/api/resources${p}` });
const patch = (token: string, p: string, query: string) =>
  t.req(token, { method: 'PATCH', url: `/api/resources${p}?${query}` });
const usage = async (token = bob, query = ''): Promise<Usage> => {
  const res = await t.get(token, `/api/usage/${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Usage;
};
const trashItems = async (token = bob): Promise<TrashItem[]> => (await t.get(token, '/api/trash')).json();
const setQuota = async (name: string, quota: number) =>
  await t.ctx.store.users.update({ ...(await t.ctx.store.users.getByUsername(name))!, quota });

/** Every file below a folder, staging files included: what a refused write must not leave. */
async function namesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    found.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return found.sort();
}

function expectRefused(res: { statusCode: number; body: string }, left: string, of = '10 kB'): void {
  expect(res.statusCode, res.body).toBe(507);
  expect(res.body).toContain(`Quota exceeded: ${left} left of ${of}`);
}

describe('the quota refuses what does not fit, with 507 and nothing left behind', () => {
  beforeEach(async () => {
    expect((await upload(bob, '/keep.bin', bytes(8_800))).statusCode).toBe(200);
  });

  it('POST: a body larger than what is left, no file and no folder made on the way', async () => {
    const before = await namesBelow(file('bob'));
    expectRefused(await upload(bob, '/new/deep/big.bin', bytes(1_300)), '1.2 kB');
    expect(await namesBelow(file('bob'))).toEqual(before);
    expect(await usage()).toEqual({ total: QUOTA, used: 8_800, quota: QUOTA });
    // What fits still goes in, to the byte.
    expect((await upload(bob, '/fits.bin', bytes(1_200))).statusCode).toBe(200);
    expect((await usage()).used).toBe(QUOTA);
  });

  it('POST with a body of no declared length: refused at the chunk that no longer fits', async () => {
    const before = await namesBelow(file('bob'));
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    // Chunked, without Content-Length: the size is only known as the bytes come.
    const answer = await new Promise<{ statusCode: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/resources/streamed.bin',
          headers: { 'x-auth': bob },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write(bytes(1_000));
      req.end(bytes(1_000));
    });
    expectRefused(answer, '1.2 kB');
    expect(await namesBelow(file('bob'))).toEqual(before);
    expect((await usage()).used).toBe(8_800);
  });

  it('PUT: a file replaced by a larger one is refused and stays as it was; its own bytes count as room', async () => {
    expectRefused(await put(bob, '/keep.bin', bytes(10_001, 'y')), '1.2 kB');
    expect(await fs.readFile(file('bob', 'keep.bin'))).toEqual(bytes(8_800));
    expect(await namesBelow(file('bob'))).toEqual(['keep.bin']);
    // Replacing 8.8 kB by 10 kB adds 1.2 kB: that fits.
    expect((await put(bob, '/keep.bin', bytes(QUOTA, 'y'))).statusCode).toBe(200);
    expect((await usage()).used).toBe(QUOTA);
  });

  it('tus: the creation is refused by its Upload-Length, and nothing is made', async () => {
    const res = await t.req(bob, {
      method: 'POST',
      url: '/api/tus/sub/big.bin',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '1300' },
    });
    expectRefused(res, '1.2 kB');
    expect(await namesBelow(file('bob'))).toEqual(['keep.bin']);
    expect(await t.ctx.store.uploads.all()).toEqual([]);
  });

  it('tus: a PATCH no longer fitting (the quota was lowered) drops the upload and its staging file', async () => {
    const created = await t.req(bob, {
      method: 'POST',
      url: '/api/tus/part.bin',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '1000' },
    });
    expect(created.statusCode, created.body).toBe(201);
    await setQuota('bob', 9_000);
    const res = await t.req(bob, {
      method: 'PATCH',
      url: '/api/tus/part.bin',
      headers: {
        'tus-resumable': '1.0.0',
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
      },
      payload: bytes(500),
    });
    expectRefused(res, '200 B', '9 kB');
    expect(await t.ctx.store.uploads.all()).toEqual([]);
    expect(await namesBelow(serverPaths(t.ctx.config).uploadsDir)).toEqual([]);
    expect(await namesBelow(file('bob'))).toEqual(['keep.bin']);
  });

  it('copy: refused before the first byte, nothing at the destination', async () => {
    expectRefused(await patch(bob, '/keep.bin', 'action=copy&destination=%2Fcopy.bin'), '1.2 kB');
    expect(await namesBelow(file('bob'))).toEqual(['keep.bin']);
    // A folder's copy is measured whole.
    await fs.mkdir(file('bob', 'dir'));
    await fs.writeFile(file('bob', 'dir', 'small.txt'), bytes(100));
    await setQuota('bob', 8_950);
    expect((await usage(bob, '?recount=true')).used).toBe(8_900);
    expectRefused(await patch(bob, '/dir', 'action=copy&destination=%2Fdir2'), '50 B', '9 kB');
    expect(await exists(file('bob', 'dir2'))).toBe(false);
  });

  it('restore: refused while the scope is over its quota (lowered since the delete); the item stays', async () => {
    expect((await del(bob, '/keep.bin')).statusCode).toBe(204);
    // The trash still counts against the quota.
    expect((await usage()).used).toBe(8_800);
    const [item] = await trashItems();
    await setQuota('bob', 5_000);
    const res = await t.req(bob, { method: 'POST', url: `/api/trash/${item!.id}/restore` });
    expectRefused(res, '0 B', '5 kB');
    expect(await exists(file('bob', 'keep.bin'))).toBe(false);
    expect((await trashItems()).map((i) => i.id)).toEqual([item!.id]);
    // With room again, it goes back and the count does not move (it was counted in the trash).
    await setQuota('bob', QUOTA);
    expect((await t.req(bob, { method: 'POST', url: `/api/trash/${item!.id}/restore` })).statusCode).toBe(
      200,
    );
    expect((await usage()).used).toBe(8_800);
  });

  it('WebDAV PUT: refused, nothing made', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/dav/dav.bin',
      headers: {
        host: 'dav.test',
        authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64'),
      },
      payload: bytes(1_300),
    });
    expectRefused(res, '1.2 kB');
    expect(await namesBelow(file('bob'))).toEqual(['keep.bin']);
  });

  it('the quota is the folder’s: an administrator writing into it is refused too', async () => {
    expectRefused(await upload(admin, '/bob/by-admin.bin', bytes(1_300)), '1.2 kB');
    expect((await upload(admin, '/elsewhere.bin', bytes(20_000))).statusCode).toBe(200);
  });
});

describe('the count follows every write without walking the tree', () => {
  it('upload, PUT, tus, copy, moves, trash, restore, delete forever and permanent deletes', async () => {
    expect(await usage()).toEqual({ total: QUOTA, used: 0, quota: QUOTA });
    await upload(bob, '/a.bin', bytes(1_000));
    expect((await usage()).used).toBe(1_000);
    await put(bob, '/a.bin', bytes(600));
    expect((await usage()).used).toBe(600);

    // A file put there behind the server's back is not seen (no walk per write) until a recount.
    await fs.writeFile(file('bob', 'outside.bin'), bytes(50));
    await upload(bob, '/b.bin', bytes(100));
    expect((await usage()).used).toBe(700);
    expect((await usage(bob, '?recount=true')).used).toBe(750);

    const tusPost = await t.req(bob, {
      method: 'POST',
      url: '/api/tus/c.bin',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '300' },
    });
    expect(tusPost.statusCode).toBe(201);
    const tusPatch = await t.req(bob, {
      method: 'PATCH',
      url: '/api/tus/c.bin',
      headers: {
        'tus-resumable': '1.0.0',
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
      },
      payload: bytes(300),
    });
    expect(tusPatch.statusCode, tusPatch.body).toBe(204);
    expect((await usage()).used).toBe(1_050);

    expect((await patch(bob, '/c.bin', 'action=copy&destination=%2Fd%2Fc.bin')).statusCode).toBe(200);
    expect((await usage()).used).toBe(1_350);
    expect((await patch(bob, '/d', 'action=rename&destination=%2Fe')).statusCode).toBe(200);
    expect((await usage()).used).toBe(1_350);

    // A move out of the scope (by someone who sees both) takes its bytes out of the count.
    expect((await patch(admin, '/bob/e', 'action=rename&destination=%2Fmoved-out')).statusCode).toBe(200);
    expect((await usage()).used).toBe(1_050);
    // And a move into it puts them back, checked like a copy.
    expect((await patch(admin, '/moved-out', 'action=rename&destination=%2Fbob%2Fback')).statusCode).toBe(
      200,
    );
    expect((await usage()).used).toBe(1_350);

    // Into the trash: still counted; restored: still the same; deleted forever: gone.
    expect((await del(bob, '/a.bin')).statusCode).toBe(204);
    expect((await usage()).used).toBe(1_350);
    const [item] = await trashItems();
    expect((await t.req(bob, { method: 'POST', url: `/api/trash/${item!.id}/restore` })).statusCode).toBe(
      200,
    );
    expect((await usage()).used).toBe(1_350);
    expect((await del(bob, '/a.bin')).statusCode).toBe(204);
    const [again] = await trashItems();
    expect((await t.req(bob, { method: 'DELETE', url: `/api/trash/${again!.id}` })).statusCode).toBe(204);
    expect((await usage()).used).toBe(750);

    // With the trash off, a delete is gone from the count at once.
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    expect((await del(bob, '/back')).statusCode).toBe(204);
    expect((await usage()).used).toBe(450);
    expect((await usage(bob, '?recount=true')).used).toBe(450);
  });

  it('a restore replacing an entry: the trash keeps counting it; with the trash off it leaves the count', async () => {
    const takenOver = async (name: string) => {
      await upload(bob, `/${name}`, bytes(1_000));
      expect((await del(bob, `/${name}`)).statusCode).toBe(204);
      await upload(bob, `/${name}`, bytes(400));
      return (await trashItems()).find((i) => i.path === `/${name}`)!;
    };
    const restoreOver = (item: TrashItem) =>
      t.req(bob, { method: 'POST', url: `/api/trash/${item.id}/restore?override=true` });

    const item = await takenOver('a.bin');
    expect((await usage()).used).toBe(1_400);
    expect((await restoreOver(item)).statusCode).toBe(200);
    // 1,000 back in the tree, the 400 replaced now in the trash: nothing left the scope.
    expect((await usage()).used).toBe(1_400);
    expect((await trashItems()).map((i) => i.size)).toEqual([400]);
    expect((await usage(bob, '?recount=true')).used).toBe(1_400);

    const other = await takenOver('b.bin');
    expect((await usage()).used).toBe(2_800);
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    expect((await restoreOver(other)).statusCode).toBe(200);
    expect((await usage()).used).toBe(2_400);
    expect((await usage(bob, '?recount=true')).used).toBe(2_400);
  });

  it('WebDAV COPY, MOVE and DELETE are counted too', async () => {
    const dav = (method: string, url: string, headers: Record<string, string> = {}, payload?: Buffer) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: {
          host: 'dav.test',
          authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64'),
          ...headers,
        },
        ...(payload && { payload }),
      });
    expect((await dav('PUT', '/dav/a.bin', {}, bytes(400))).statusCode).toBe(201);
    expect((await usage()).used).toBe(400);
    expect((await dav('COPY', '/dav/a.bin', { destination: 'http://dav.test/dav/b.bin' })).statusCode).toBe(
      201,
    );
    expect((await usage()).used).toBe(800);
    // An overwriting COPY replaces what was there.
    expect((await dav('PUT', '/dav/small.bin', {}, bytes(10))).statusCode).toBe(201);
    expect(
      (await dav('COPY', '/dav/a.bin', { destination: 'http://dav.test/dav/small.bin' })).statusCode,
    ).toBe(204);
    expect((await usage()).used).toBe(1_200);
    expect((await dav('MOVE', '/dav/b.bin', { destination: 'http://dav.test/dav/c.bin' })).statusCode).toBe(
      201,
    );
    expect((await usage()).used).toBe(1_200);
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    expect((await dav('DELETE', '/dav/c.bin')).statusCode).toBe(204);
    expect((await usage()).used).toBe(800);
    expect((await usage(bob, '?recount=true')).used).toBe(800);
  });
});

describe('parallel writes', () => {
  it('cannot pass the check together: what is stored never exceeds the quota', async () => {
    const size = 3_000;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => upload(bob, `/p${i}.bin`, bytes(size))),
    );
    const ok = results.filter((r) => r.statusCode === 200).length;
    const refused = results.filter((r) => r.statusCode === 507);
    expect(ok + refused.length).toBe(8);
    expect(ok).toBe(3);
    for (const r of refused) expect(r.body).toContain('Quota exceeded');
    let stored = 0;
    for (const name of await fs.readdir(file('bob'))) stored += (await fs.stat(file('bob', name))).size;
    expect(stored).toBe(ok * size);
    expect(stored).toBeLessThanOrEqual(QUOTA);
    expect((await usage()).used).toBe(stored);
  });

  it('moves onto one file count what each really replaced: the count stays the bytes on disk', async () => {
    // The trash is off: what a move replaces is gone, and counts nothing any more.
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    expect((await upload(bob, '/big.bin', bytes(8_000))).statusCode).toBe(200);
    const small = Array.from({ length: 8 }, (_, i) => `/s${i}.bin`);
    for (const p of small) expect((await upload(bob, p, bytes(10))).statusCode).toBe(200);
    const moves = await Promise.all(
      small.map((p) => patch(bob, p, 'action=rename&destination=%2Fbig.bin&override=true')),
    );
    for (const res of moves) expect([200, 404, 409], res.body).toContain(res.statusCode);
    const onDisk = (await namesBelow(file('bob'))).length;
    expect(onDisk).toBeGreaterThan(0);
    let bytesOnDisk = 0;
    for (const name of await namesBelow(file('bob'))) bytesOnDisk += (await fs.stat(file('bob', name))).size;
    // Each of the first moves replaced the one before it, not the big file: 8 000 bytes were
    // given back once, not once per move (which would leave room past the quota).
    expect((await usage()).used).toBe(bytesOnDisk);
  });

  describe('a move into a quota on one file system counts what landed, put into its source while it was measured included', () => {
    const late = async (bytesLate: number) => {
      await fs.mkdir(file('src', 'h', 'deep'), { recursive: true });
      await fs.writeFile(file('src', 'h', 'deep', 'a.bin'), bytes(100));
      await fs.writeFile(file('src', 'h', 'b.bin'), bytes(100));
      // Measured already, about to be renamed: a file arrives in the source.
      seam.next(() => fs.writeFile(file('src', 'h', 'deep', 'late.bin'), bytes(bytesLate)));
    };
    const moveTo = (destination: string) =>
      patch(admin, '/src/h', `action=rename&override=true&destination=${encodeURIComponent(destination)}`);

    it.each([
      ['a free name', '/bob/h'],
      ['an empty folder (merged by one rename)', '/bob/empty'],
    ])('into %s: what no longer fits goes back whole, with 507', async (_, destination) => {
      await fs.mkdir(file('bob', 'empty'), { recursive: true });
      await late(20_000);
      const res = await moveTo(destination);
      expect(res.statusCode, res.body).toBe(507);
      expect(res.body).toMatch(/Quota exceeded/);
      expect(await namesBelow(file('src', 'h'))).toEqual(['b.bin', 'deep', 'deep/a.bin', 'deep/late.bin']);
      expect(await namesBelow(file('bob'))).toEqual(['empty']);
      expect((await usage()).used).toBe(0);
    });

    it.each([
      ['a free name', '/bob/h'],
      ['an empty folder (merged by one rename)', '/bob/empty'],
      ['a folder holding files (merged entry by entry)', '/bob/full'],
    ])('into %s: what fits is counted, the late file too', async (_, destination) => {
      await fs.mkdir(file('bob', 'empty'), { recursive: true });
      await fs.mkdir(file('bob', 'full'), { recursive: true });
      await fs.writeFile(file('bob', 'full', 'kept.bin'), bytes(50));
      await late(3_000);
      const res = await moveTo(destination);
      expect(res.statusCode, res.body).toBe(200);
      expect(await exists(file('bob', destination.slice('/bob/'.length), 'deep', 'late.bin'))).toBe(true);
      // Counted as it moved, without a walk: what a recount then finds.
      expect((await usage()).used).toBe(3_250);
      expect((await usage(bob, '?recount=true')).used).toBe(3_250);
    });

    it('entry by entry: a late file that no longer fits moves everything back', async () => {
      await fs.mkdir(file('bob', 'full'), { recursive: true });
      await fs.writeFile(file('bob', 'full', 'kept.bin'), bytes(50));
      await late(20_000);
      const res = await patch(admin, '/src/h', 'action=rename&destination=%2Fbob%2Ffull&override=true');
      expect(res.statusCode, res.body).toBe(507);
      expect(await namesBelow(file('src', 'h'))).toEqual(['b.bin', 'deep', 'deep/a.bin', 'deep/late.bin']);
      expect(await namesBelow(file('bob'))).toEqual(['full', 'full/kept.bin']);
      expect((await usage()).used).toBe(50);
    });
  });

  describe('a recount under which an entry moves walks again', () => {
    /** Two folders of 3 kB; as the walk meets the first, `act` changes the other. */
    const racedRecount = async (act: (other: string) => Promise<void>) => {
      for (const dir of ['p', 'q']) {
        await fs.mkdir(file('bob', dir));
        await fs.writeFile(file('bob', dir, 'big.bin'), bytes(3_000));
      }
      expect((await usage(bob, '?recount=true')).used).toBe(6_000);
      let raced = false;
      quotaLedgerOf(t.ctx).walkStep = async (real) => {
        const name = path.basename(real);
        if (raced || (name !== 'p' && name !== 'q')) return;
        raced = true;
        await act(name === 'p' ? 'q' : 'p');
      };
      const counted = (await usage(bob, '?recount=true')).used;
      expect(raced).toBe(true);
      return counted;
    };

    it('a file moved to where the walk has been is not missed: the quota holds', async () => {
      const counted = await racedRecount(async (other) => {
        const res = await patch(bob, `/${other}/big.bin`, 'action=rename&destination=%2Fmoved.bin');
        expect(res.statusCode, res.body).toBe(200);
      });
      expect(counted).toBe(6_000);
      expect((await upload(bob, '/more.bin', bytes(5_000))).statusCode).toBe(507);
    });

    it('a file deleted into the trash meanwhile counts once, and once more when it is restored', async () => {
      const counted = await racedRecount(async (other) => {
        expect((await del(bob, `/${other}/big.bin`)).statusCode).toBe(204);
      });
      expect(counted).toBe(6_000);
      const [item] = await trashItems();
      const back = await t.req(bob, { method: 'POST', url: `/api/trash/${item!.id}/restore` });
      expect(back.statusCode, back.body).toBe(200);
      expect((await usage()).used).toBe(6_000);
      expect((await upload(bob, '/more.bin', bytes(5_000))).statusCode).toBe(507);
    });
  });

  // Every step at that depth goes through 3,000 folders: long on a busy machine (a bound, not a measure).
  it('a recount walks a tree thousands of folders deep to its bottom', async () => {
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    const deep = '/deep/' + 'c/'.repeat(3000) + 'f.bin';
    const put = await upload(bob, deep, bytes(5_000));
    expect(put.statusCode, put.body).toBe(200);
    expect((await usage(bob, '?recount=true')).used).toBe(5_000);
    expect((await upload(bob, '/more.bin', bytes(6_000))).statusCode).toBe(507);
    // Removed as deep as it was made (the folder's own path is longer than any path may be).
    expect((await del(bob, '/deep')).statusCode).toBe(204);
    expect((await usage(bob, '?recount=true')).used).toBe(0);
  }, 180_000);

  it('a recount under which a folder not yet walked is swapped for a file walks again', async () => {
    await fs.mkdir(file('bob', 'a'));
    await fs.mkdir(file('bob', 'z'));
    await fs.writeFile(file('bob', 'z', 'big.bin'), bytes(4_000));
    expect((await usage(bob, '?recount=true')).used).toBe(4_000);
    let raced = false;
    quotaLedgerOf(t.ctx).walkStep = async (real) => {
      if (raced || path.basename(real) !== 'a') return;
      raced = true;
      // The walk has listed the scope and enters a: z goes into a (walked), a file takes its name.
      expect((await patch(bob, '/z', 'action=rename&destination=%2Fa%2Fz')).statusCode).toBe(200);
      expect((await upload(bob, '/z', bytes(0))).statusCode).toBe(200);
    };
    expect((await usage(bob, '?recount=true')).used).toBe(4_000);
    expect(raced).toBe(true);
  });

  describe('a write whose folder goes away before it lands saves nothing', () => {
    it.each([
      ['deleted into the trash', () => del(admin, '/src/x')],
      [
        'moved into a folder with a quota',
        () => patch(admin, '/src/x', 'action=rename&destination=%2Fbob%2Fx'),
      ],
    ])('%s: 409, the file nowhere, every count as it was', async (_, act) => {
      await fs.mkdir(file('src', 'x'), { recursive: true });
      seam.next(async () => {
        const done = await act();
        expect(done.statusCode, done.body).toBeLessThan(300);
      });
      const res = await upload(admin, '/src/x/f.bin', bytes(5_000));
      expect(res.statusCode, res.body).toBe(409);
      expect(res.body).toMatch(/moved or deleted while the file was written/);
      expect(await exists(file('bob', 'x', 'f.bin'))).toBe(false);
      expect(await exists(file('src', 'x', 'f.bin'))).toBe(false);
      for (const item of await trashItems(admin)) expect(item.size).toBeLessThanOrEqual(5_000);
      // (A move counts what it carries, a write in progress too, until the next walk.)
      expect((await usage(bob, '?recount=true')).used).toBe(0);
    });
  });

  it('a move counts files named as staging files along with the rest, as a recount does', async () => {
    await fs.mkdir(file('src', 'y'), { recursive: true });
    await fs.writeFile(file('src', 'y', stagingName('looks-like-a-write')), bytes(20_000));
    const res = await patch(admin, '/src/y', 'action=rename&destination=%2Fbob%2Fy');
    expect(res.statusCode, res.body).toBe(507);
    expect(await exists(file('bob', 'y'))).toBe(false);
    expect((await usage(bob, '?recount=true')).used).toBe(0);
  });

  it('tus creations hold their Upload-Length until they complete or are cancelled', async () => {
    const create = (name: string) =>
      t.req(bob, {
        method: 'POST',
        url: `/api/tus/${name}`,
        headers: { 'tus-resumable': '1.0.0', 'upload-length': '4000' },
      });
    const answers = await Promise.all(['t1', 't2', 't3'].map(create));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 507]);
    // A cancelled upload gives its room back.
    const made = ['t1', 't2', 't3'].filter((_, i) => answers[i]!.statusCode === 201);
    expect((await t.req(bob, { method: 'DELETE', url: `/api/tus/${made[0]}` })).statusCode).toBe(204);
    expect((await create('t4')).statusCode).toBe(201);
  });
});

describe('users sharing a scope share its quota', () => {
  it('the smallest non-zero quota of theirs applies, and both see the same count', async () => {
    const carol = await t.user('carol', { scope: '/bob', quota: 0 });
    expect(await usage(carol)).toEqual({ total: QUOTA, used: 0, quota: QUOTA });
    const dave = await t.user('dave', { scope: '/bob', quota: 5_000 });
    expect((await upload(carol, '/c.bin', bytes(4_000))).statusCode).toBe(200);
    expectRefused(await upload(bob, '/b.bin', bytes(1_500)), '1 kB', '5 kB');
    expect(await usage(dave)).toEqual({ total: 5_000, used: 4_000, quota: 5_000 });
  });

  it('without a quota, /api/usage answers the disk as before', async () => {
    const answer = await usage(admin);
    expect(answer.quota).toBeUndefined();
    expect(answer.total).toBeGreaterThan(0);
  });
});

describe('the quota in the user record', () => {
  it('is set by an admin, shown in the user, and kept by clients that do not send it', async () => {
    const id = (await t.ctx.store.users.getByUsername('bob'))!.id;
    const adminId = (await t.ctx.store.users.getByUsername('root'))!.id;
    expect(adminId).toBeGreaterThan(0);
    const set = await t.req(admin, {
      method: 'PUT',
      url: `/api/users/${id}`,
      payload: { what: 'user', which: ['quota'], current_password: PASSWORD, data: { id, quota: 20_000 } },
    });
    expect(set.statusCode, set.body).toBe(200);
    const shown = (await t.get(admin, `/api/users/${id}`)).json() as User;
    expect(shown.quota).toBe(20_000);
    // An old client's full update has no quota field: the quota stays.
    const { quota: _quota, ...old } = shown;
    const full = await t.req(admin, {
      method: 'PUT',
      url: `/api/users/${id}`,
      payload: { what: 'user', which: ['all'], current_password: PASSWORD, data: old },
    });
    expect(full.statusCode, full.body).toBe(200);
    expect((await t.ctx.store.users.get(id))!.quota).toBe(20_000);
    // A user cannot raise their own.
    const self = await t.req(bob, {
      method: 'PUT',
      url: `/api/users/${id}`,
      payload: { what: 'user', which: ['quota'], current_password: PASSWORD, data: { id, quota: 0 } },
    });
    expect(self.statusCode).toBe(403);
    expect(
      (
        await t.req(admin, {
          method: 'PUT',
          url: `/api/users/${id}`,
          payload: { what: 'user', which: ['quota'], current_password: PASSWORD, data: { id, quota: -1 } },
        })
      ).statusCode,
    ).toBe(400);
  });

  it('new users get the quota of the user defaults, which the global settings set', async () => {
    const res = await t.req(admin, {
      method: 'PUT',
      url: '/api/settings',
      payload: { defaults: { quota: 1234 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(t.ctx.store.settings.get().defaults.quota).toBe(1234);
    const refused = await t.req(admin, {
      method: 'PUT',
      url: '/api/settings',
      payload: { defaults: { quota: -1 } },
    });
    expect(refused.statusCode).toBe(400);
    expect(t.ctx.store.settings.get().defaults.quota).toBe(1234);
    await t.user('erin');
    expect((await t.ctx.store.users.getByUsername('erin'))!.quota).toBe(1234);
  });
});

describe('the server’s own files in the served folder (File Browser’s layout)', () => {
  it('are never counted, and the trash counts once, by its records', async () => {
    const own = await startFilesApp((base) => ({
      cacheDir: '',
      database: path.join(base, 'root', 'filebrowser.db'),
    }));
    try {
      const whole = await own.user('whole', { scope: '/', quota: 1_000_000 });
      const used = async (query = '') => ((await own.get(whole, `/api/usage/${query}`)).json() as Usage).used;
      expect(await used()).toBe(0);
      const res = await own.req(whole, {
        method: 'POST',
        url: '/api/resources/a.bin',
        payload: bytes(1_000),
      });
      expect(res.statusCode).toBe(200);
      expect(await used()).toBe(1_000);
      expect((await own.req(whole, { method: 'DELETE', url: '/api/resources/a.bin' })).statusCode).toBe(204);
      expect(await used()).toBe(1_000);
      // A fresh walk finds the database and the trash folder in the root and leaves both out.
      expect(await used('?recount=true')).toBe(1_000);
    } finally {
      await own.close();
    }
  });
});
