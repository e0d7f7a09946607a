import fs from 'node:fs/promises';
import path from 'node:path';
import type { TrashItem, Usage } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureSeam } from '../src/files/change/measure.js';
import { quotaLedgerOf } from '../src/files/change/quota.js';
import { fileAccessFor } from '../src/files/access/access.js';
import { ALL, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * A walk is not a snapshot: the twelfth attack hid bytes from quotas by renaming while the
 * server measured (a recount, a move's landing, a delete into the trash). What a measure that
 * never saw the tree still decides is not trusted: a recount never lowers a count with it, a
 * move goes back, a delete is refused; and a folder that changed is listed again as the walk
 * leaves it, so a rename within it is not missed.
 */

let t: FilesApp;
let bob: string;
let admin: string;
const QUOTA = 10_000;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob', { quota: QUOTA });
  admin = await t.user('root', { scope: '/', perm: { ...ALL, admin: true } });
});
afterEach(async () => {
  measureSeam.step = undefined;
  await t.close();
});

const bytes = (n: number) => Buffer.alloc(n, 'x');
const file = (...p: string[]) => path.join(t.root, ...p);
const upload = (token: string, p: string, body: Buffer) =>
  t.req(token, { method: 'POST', url: `/api/resources${p}`, payload: body });
const usage = async (query = ''): Promise<Usage> => (await t.get(bob, `/api/usage/${query}`)).json();
const fresh = (() => {
  let n = 0;
  return () => `renamed-${++n}.bin`;
})();

describe('a recount', () => {
  it('whose every walk misses a file moved between folders keeps the count it had', async () => {
    await fs.mkdir(file('bob', 'a'));
    await fs.mkdir(file('bob', 'z'));
    await fs.writeFile(file('bob', 'z', 'f.bin'), bytes(4_000));
    expect((await usage('?recount=true')).used).toBe(4_000);
    // Before the walk enters a, the file goes to z; before it enters z, back to a: never met.
    let moves = 0;
    quotaLedgerOf(t.ctx).walkStep = async (real) => {
      const away = { [file('bob', 'a')]: ['a', 'z'], [file('bob', 'z')]: ['z', 'a'] }[real];
      if (!away) return;
      const [from, to] = away as [string, string];
      await fs.rename(file('bob', from, 'f.bin'), file('bob', to, 'f.bin')).then(
        () => moves++,
        () => undefined,
      );
    };
    expect((await usage('?recount=true')).used).toBe(4_000);
    expect(moves).toBeGreaterThanOrEqual(3);
    quotaLedgerOf(t.ctx).walkStep = undefined;
    expect((await upload(bob, '/more.bin', bytes(7_000))).statusCode).toBe(507);
  });

  it('finds a file renamed within its folder while the walk was there: the folder is listed again', async () => {
    await fs.mkdir(file('bob', 'h'));
    await fs.writeFile(file('bob', 'h', 'a.bin'), bytes(100));
    expect((await usage('?recount=true')).used).toBe(100);
    // Put there behind the server's back: only a walk can count it.
    await fs.writeFile(file('bob', 'h', 'z.bin'), bytes(4_000));
    let current = 'z.bin';
    quotaLedgerOf(t.ctx).walkStep = async (real) => {
      if (real !== file('bob', 'h', 'a.bin')) return;
      const next = fresh();
      await fs.rename(file('bob', 'h', current), file('bob', 'h', next));
      current = next;
    };
    expect((await usage('?recount=true')).used).toBe(4_100);
  });
});

describe('the hourly recount of every scope', () => {
  it('keeps the count of a scope it could not walk: writes below do not walk again and fail', async () => {
    expect((await upload(bob, '/first.bin', bytes(1_000))).statusCode).toBe(200);
    // A tree deeper than the descriptors a walk may hold, say: the walk fails, not as a refusal.
    quotaLedgerOf(t.ctx).walkStep = () => {
      throw Object.assign(new Error('too many open files'), { code: 'EMFILE' });
    };
    const user = (await t.ctx.store.users.getByUsername('root'))!;
    await quotaLedgerOf(t.ctx).recountAll(await fileAccessFor(t.ctx, user));
    const put = await upload(bob, '/second.bin', bytes(1_000));
    expect(put.statusCode, put.body).toBe(200);
    quotaLedgerOf(t.ctx).walkStep = undefined;
    expect((await usage()).used).toBe(2_000);
  });
});

describe('a move into a folder with a quota', () => {
  it('goes back whole when what landed kept changing under every measure (409)', async () => {
    await fs.mkdir(file('src', 'x'), { recursive: true });
    await fs.writeFile(file('src', 'x', 'a.bin'), bytes(100));
    await fs.writeFile(file('src', 'x', 'big.bin'), bytes(3_000));
    let current = 'big.bin';
    measureSeam.step = async (real) => {
      if (path.basename(real) !== 'a.bin' || !real.startsWith(file('bob'))) return;
      const next = fresh();
      await fs.rename(file('bob', 'x', current), file('bob', 'x', next));
      current = next;
    };
    const res = await t.req(admin, {
      method: 'PATCH',
      url: '/api/resources/src/x?action=rename&destination=%2Fbob%2Fx',
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.body).toContain('kept changing while it was measured');
    measureSeam.step = undefined;
    expect((await fs.readdir(file('src', 'x'))).sort()).toEqual(['a.bin', current].sort());
    expect(await fs.stat(file('bob', 'x')).catch(() => undefined)).toBeUndefined();
    expect((await usage()).used).toBe(0);
  });

  it('still goes in when it is written a moment before (the measure waits for it to be still)', async () => {
    await fs.mkdir(file('src', 'y'), { recursive: true });
    await fs.writeFile(file('src', 'y', 'a.bin'), bytes(2_000));
    const res = await t.req(admin, {
      method: 'PATCH',
      url: '/api/resources/src/y?action=rename&destination=%2Fbob%2Fy',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await usage()).used).toBe(2_000);
  });
});

describe('a delete into the trash', () => {
  it('counts in the trash what was written into the folder while it was measured', async () => {
    await fs.mkdir(file('bob', 'd'));
    await fs.writeFile(file('bob', 'd', 'small.bin'), bytes(500));
    let written = false;
    measureSeam.step = async () => {
      if (written) return;
      written = true;
      await fs.writeFile(file('bob', 'd', 'late.bin'), bytes(5_000));
    };
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/d' })).statusCode).toBe(204);
    expect(written).toBe(true);
    const items = (await t.get(bob, '/api/trash')).json<TrashItem[]>();
    expect(items.map((i) => i.size)).toEqual([5_500]);
    measureSeam.step = undefined;
    expect((await usage('?recount=true')).used).toBe(5_500);
    expect((await upload(bob, '/more.bin', bytes(5_000))).statusCode).toBe(507);
  });

  it('is refused where a quota counts it while it keeps changing under every measure (409)', async () => {
    await fs.mkdir(file('bob', 'e'));
    await fs.writeFile(file('bob', 'e', 'a.bin'), bytes(100));
    await fs.writeFile(file('bob', 'e', 'big.bin'), bytes(3_000));
    let current = 'big.bin';
    measureSeam.step = async (real) => {
      if (path.basename(real) !== 'a.bin') return;
      const next = fresh();
      await fs.rename(file('bob', 'e', current), file('bob', 'e', next));
      current = next;
    };
    const res = await t.req(bob, { method: 'DELETE', url: '/api/resources/e' });
    expect(res.statusCode, res.body).toBe(409);
    measureSeam.step = undefined;
    expect((await fs.readdir(file('bob', 'e'))).sort()).toEqual(['a.bin', current].sort());
    expect((await t.get(bob, '/api/trash')).json<TrashItem[]>()).toEqual([]);
  });
});
