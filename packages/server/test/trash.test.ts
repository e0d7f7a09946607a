import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FileInfo, TrashItem } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serverPaths } from '../src/files/access/private.js';
import { purgeExpired } from '../src/files/change/trash.js';
import type { StoredUser } from '../src/store/users.js';
import { ALL, deny, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * The trash. The database sits in the served folder here (File Browser's defaults), so
 * the trash folder is inside the whole-root user's view: every way in must refuse it.
 */
let t: FilesApp;
let alice: string; // the whole root
let bob: string; // scope /bob
let trashDir: string;

beforeEach(async () => {
  t = await startFilesApp((base) => ({ cacheDir: '', database: path.join(base, 'root', 'filebrowser.db') }), {
    pathEnv: '',
  });
  alice = await t.user('alice', { scope: '/' });
  bob = await t.user('bob');
  trashDir = serverPaths(t.ctx.config).trashDir;
  await fs.mkdir(path.join(t.root, 'docs', 'sub'), { recursive: true });
  await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'alpha');
  await fs.writeFile(path.join(t.root, 'docs', 'sub', 'b.txt'), 'bravo!');
  await fs.writeFile(path.join(t.root, 'bob', 'mine.txt'), 'bob’s');
});
afterEach(async () => {
  await t.close();
});

const del = (token: string, p: string) => t.req(token, { method: 'DELETE', url: `/api/resources${p}` });
const list = async (token: string, query = ''): Promise<TrashItem[]> => {
  const res = await t.get(token, `/api/trash${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as TrashItem[];
};
const restore = (token: string, id: string, query = '') =>
  t.req(token, { method: 'POST', url: `/api/trash/${id}/restore${query}` });
const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );
const userId = async (name: string) => (await t.ctx.store.users.getByUsername(name))!.id;
const setUser = async (name: string, patch: Partial<StoredUser>) =>
  await t.ctx.store.users.update({ ...(await t.ctx.store.users.getByUsername(name))!, ...patch });
const itemDir = (item: TrashItem) => path.join(trashDir, String(item.userID), item.id);

/** Deletes `p` as `token` and answers its trash item. */
async function trash(token: string, p: string): Promise<TrashItem> {
  const res = await del(token, p);
  expect(res.statusCode, res.body).toBe(204);
  expect(res.headers['x-delete-outcome']).toBe('trash');
  const item = (await list(token)).find((i) => i.path === p);
  expect(item).toBeDefined();
  return item!;
}

describe('a delete with the trash on', () => {
  it('renames the entry into the deleting user’s trash (same inode, no copy) and records it', async () => {
    const before = await fs.stat(path.join(t.root, 'docs', 'a.txt'));
    const item = await trash(alice, '/docs/a.txt');
    expect(await exists(path.join(t.root, 'docs', 'a.txt'))).toBe(false);
    const inTrash = await fs.stat(path.join(itemDir(item), 'a.txt'));
    expect(inTrash.ino).toBe(before.ino);
    expect(inTrash.dev).toBe(before.dev);
    expect(item).toMatchObject({
      userID: await userId('alice'),
      name: 'a.txt',
      path: '/docs/a.txt',
      folder: '/docs',
      size: 5,
      isDir: false,
      deletedBy: 'alice',
    });
    expect(item.expiresAt - item.deletedAt).toBe(30 * 24 * 3600 * 1000);
    const row = (await t.ctx.store.trash.get(item.id))!;
    expect(row).toMatchObject({
      rootId: 'default',
      rootPath: '/docs/a.txt',
      location: `${item.userID}/${item.id}`,
    });
  });

  it('moves a folder whole, with its size summed', async () => {
    const before = await fs.stat(path.join(t.root, 'docs'));
    const item = await trash(alice, '/docs');
    expect(item).toMatchObject({ isDir: true, size: 11, name: 'docs', folder: '/' });
    expect((await fs.stat(path.join(itemDir(item), 'docs'))).ino).toBe(before.ino);
    expect(await fs.readFile(path.join(itemDir(item), 'docs', 'sub', 'b.txt'), 'utf8')).toBe('bravo!');
  });

  it('records a scoped user’s path in their scope and the place below the root', async () => {
    const item = await trash(bob, '/mine.txt');
    expect(item.path).toBe('/mine.txt');
    expect((await t.ctx.store.trash.get(item.id))!.rootPath).toBe('/bob/mine.txt');
    expect(await list(alice)).toEqual([]);
  });

  it('is the same through WebDAV: DELETE moves the entry into the trash', async () => {
    const before = await fs.stat(path.join(t.root, 'docs', 'sub'));
    const auth = 'Basic ' + Buffer.from(`alice:${PASSWORD}`).toString('base64');
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/dav/docs/sub/',
      headers: { authorization: auth },
    });
    expect(res.statusCode, res.body).toBe(204);
    expect(await exists(path.join(t.root, 'docs', 'sub'))).toBe(false);
    const [item] = await list(alice);
    expect(item).toMatchObject({ path: '/docs/sub', isDir: true, size: 6 });
    expect((await fs.stat(path.join(itemDir(item!), 'sub'))).ino).toBe(before.ino);
    const listing = await t.app.inject({
      method: 'PROPFIND',
      url: '/dav/',
      headers: { authorization: auth, depth: '1' },
    });
    expect(listing.body).not.toContain(path.basename(trashDir));
  });

  it('still refuses what a delete refuses: the scope itself, a missing path, a denied descendant', async () => {
    expect((await del(alice, '/')).statusCode).toBe(403);
    expect((await del(alice, '/nothing.txt')).statusCode).toBe(404);
    await setUser('alice', { rules: [deny('/docs/sub')] });
    expect((await del(alice, '/docs')).statusCode).toBe(403);
    expect(await exists(path.join(t.root, 'docs', 'sub', 'b.txt'))).toBe(true);
    expect(await t.ctx.store.trash.list(await userId('alice'))).toEqual([]);
  });

  it('takes the item’s share links with it', async () => {
    const res = await t.req(alice, { method: 'POST', url: '/api/share/docs/a.txt', payload: {} });
    expect(res.statusCode).toBe(200);
    const hash = res.json().hash as string;
    await trash(alice, '/docs/a.txt');
    expect(await t.ctx.store.shares.get(hash)).toBeUndefined();
    expect((await t.app.inject({ method: 'GET', url: `/api/public/share/${hash}` })).statusCode).toBe(404);
  });
});

describe('the trash folder is private', () => {
  it('never shows in listings, search, archives or public shares, and refuses every request', async () => {
    await trash(alice, '/docs/a.txt');
    const name = path.basename(trashDir);
    expect(path.dirname(trashDir)).toBe(t.root);
    const listing = JSON.parse((await t.get(alice, '/api/resources/')).body) as FileInfo;
    expect(listing.items!.map((i) => i.name)).not.toContain(name);
    const recursive = await t.get(alice, '/api/resources/recursive/');
    expect(recursive.body).not.toContain(name);
    expect(recursive.body).not.toContain('a.txt');
    expect((await t.get(alice, '/api/search/?query=a.txt')).body).toBe('');
    const archive = await t.get(alice, '/api/raw/?algo=tar');
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('alpha'))).toBe(false);
    expect(archive.rawPayload.includes(Buffer.from(name))).toBe(false);

    const share = await t.req(alice, { method: 'POST', url: '/api/share/', payload: {} });
    expect(share.statusCode).toBe(200);
    const pub = await t.app.inject({ method: 'GET', url: `/api/public/share/${share.json().hash}` });
    expect(pub.statusCode).toBe(200);
    expect(pub.body).not.toContain(name);

    const item = (await list(alice))[0]!;
    for (const url of [
      `/api/resources/${name}`,
      `/api/resources/${name}/`,
      `/api/resources/${name}/${item.userID}/${item.id}/a.txt`,
      `/api/raw/${name}/${item.userID}/${item.id}/a.txt`,
      `/api/raw/${name}/?algo=zip`,
    ]) {
      expect((await t.get(alice, url)).statusCode, url).toBe(403);
    }
    expect((await del(alice, `/${name}`)).statusCode).toBe(403);
    const copyIn = await t.req(alice, {
      method: 'PATCH',
      url: `/api/resources/docs/sub/b.txt?action=copy&destination=${encodeURIComponent(`/${name}/x.txt`)}`,
    });
    expect(copyIn.statusCode).toBe(403);
    expect(await exists(path.join(itemDir(item), 'a.txt'))).toBe(true);
  });
});

describe('POST /api/trash/:id/restore', () => {
  it('puts the item back where it was, by a rename', async () => {
    const before = await fs.stat(path.join(t.root, 'docs'));
    const item = await trash(alice, '/docs');
    const res = await restore(alice, item.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ path: '/docs', recreatedFolders: false, copied: false });
    expect((await fs.stat(path.join(t.root, 'docs'))).ino).toBe(before.ino);
    expect(await fs.readFile(path.join(t.root, 'docs', 'sub', 'b.txt'), 'utf8')).toBe('bravo!');
    expect(await list(alice)).toEqual([]);
    expect(await exists(itemDir(item))).toBe(false);
  });

  it('refuses a taken name with 409 and a message, changing nothing', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'new alpha');
    const res = await restore(alice, item.id);
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('a.txt already exists in /docs');
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('new alpha');
    expect(await fs.readFile(path.join(itemDir(item), 'a.txt'), 'utf8')).toBe('alpha');
    expect((await list(alice)).map((i) => i.id)).toEqual([item.id]);
  });

  it('keeps both with rename=true', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'new alpha');
    const res = await restore(alice, item.id, '?rename=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().path).toBe('/docs/a(1).txt');
    expect(await fs.readFile(path.join(t.root, 'docs', 'a(1).txt'), 'utf8')).toBe('alpha');
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('new alpha');
  });

  it('replaces with override=true, which needs modify', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'new alpha');
    await setUser('alice', { perm: { ...ALL, modify: false } });
    const refused = await restore(alice, item.id, '?override=true');
    expect(refused.statusCode).toBe(403);
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('new alpha');
    expect((await list(alice)).map((i) => i.id)).toEqual([item.id]);
    await setUser('alice', { perm: ALL });
    const res = await restore(alice, item.id, '?override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('alpha');
    expect((await list(alice)).map((i) => i.id)).not.toContain(item.id);
  });

  it('puts the entry an override replaces into the trash, recorded like a delete, and it can come back', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'new alpha');
    const replacedIno = (await fs.stat(path.join(t.root, 'docs', 'a.txt'))).ino;
    const res = await restore(alice, item.id, '?override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('alpha');

    const [replaced, ...others] = await list(alice);
    expect(others).toEqual([]);
    expect(replaced).toMatchObject({
      userID: await userId('alice'),
      name: 'a.txt',
      path: '/docs/a.txt',
      folder: '/docs',
      size: 'new alpha'.length,
      isDir: false,
      deletedBy: 'alice',
    });
    expect(replaced!.id).not.toBe(item.id);
    // Moved as it was, by a rename: the same file, not a copy.
    expect((await fs.stat(path.join(itemDir(replaced!), 'a.txt'))).ino).toBe(replacedIno);

    // Restored in turn over the first one, which goes back to the trash: nothing is ever lost.
    const back = await restore(alice, replaced!.id, '?override=true');
    expect(back.statusCode, back.body).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('new alpha');
    const [first] = await list(alice);
    expect(first).toMatchObject({ path: '/docs/a.txt', size: 'alpha'.length });
    expect(await fs.readFile(path.join(itemDir(first!), 'a.txt'), 'utf8')).toBe('alpha');
  });

  it('puts a replaced folder into the trash whole, and takes its share links with it', async () => {
    const item = await trash(alice, '/docs/sub');
    await fs.mkdir(path.join(t.root, 'docs', 'sub', 'deeper'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'docs', 'sub', 'deeper', 'c.txt'), 'charlie');
    const shared = await t.req(alice, {
      method: 'POST',
      url: '/api/share/docs/sub/deeper/c.txt',
      payload: {},
    });
    expect(shared.statusCode, shared.body).toBe(200);
    const hash = shared.json().hash as string;

    const res = await restore(alice, item.id, '?override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readdir(path.join(t.root, 'docs', 'sub'))).toEqual(['b.txt']);
    const [replaced] = await list(alice);
    expect(replaced).toMatchObject({ path: '/docs/sub', isDir: true, size: 'charlie'.length });
    expect(await fs.readFile(path.join(itemDir(replaced!), 'sub', 'deeper', 'c.txt'), 'utf8')).toBe(
      'charlie',
    );
    expect(await t.ctx.store.shares.get(hash)).toBeUndefined();
  });

  it('refuses an override whose replaced folder holds what a rule denies: 403, nothing moves', async () => {
    const item = await trash(alice, '/docs/sub');
    await fs.mkdir(path.join(t.root, 'docs', 'sub'));
    await fs.writeFile(path.join(t.root, 'docs', 'sub', 'secret.txt'), 'hidden');
    await setUser('alice', { rules: [deny('/docs/sub/secret.txt')] });
    const res = await restore(alice, item.id, '?override=true');
    expect(res.statusCode).toBe(403);
    expect(await fs.readdir(path.join(t.root, 'docs', 'sub'))).toEqual(['secret.txt']);
    expect((await list(alice)).map((i) => i.id)).toEqual([item.id]);
    expect(await exists(path.join(itemDir(item), 'sub', 'b.txt'))).toBe(true);
  });

  it('refuses a folder restored under another name when a rule hides part of it at its place (a red-team finding)', async () => {
    const item = await trash(alice, '/docs/sub');
    await setUser('alice', { rules: [deny('/docs/sub/b.txt')] });
    await fs.mkdir(path.join(t.root, 'docs', 'sub'));
    const res = await restore(alice, item.id, '?rename=true');
    expect(res.statusCode, res.body).toBe(403);
    expect(await fs.readdir(path.join(t.root, 'docs'))).toEqual(['a.txt', 'sub']);
    expect((await list(alice)).map((i) => i.id)).toEqual([item.id]);
  });

  it('makes the missing folders on the way again and says so', async () => {
    const item = await trash(alice, '/docs/sub/b.txt');
    await fs.rm(path.join(t.root, 'docs'), { recursive: true });
    const res = await restore(alice, item.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ path: '/docs/sub/b.txt', recreatedFolders: true, copied: false });
    expect(await fs.readFile(path.join(t.root, 'docs', 'sub', 'b.txt'), 'utf8')).toBe('bravo!');
  });

  it('goes through the user’s current rules and scope: a place now denied is 403 and the item stays', async () => {
    const file = await trash(alice, '/docs/a.txt');
    const folder = await trash(alice, '/docs/sub');
    await setUser('alice', { rules: [deny('/docs/a.txt'), deny('/docs/sub/b.txt')] });
    for (const item of [file, folder]) {
      const res = await restore(alice, item.id);
      expect(res.statusCode, item.path).toBe(403);
    }
    expect(await exists(path.join(t.root, 'docs', 'a.txt'))).toBe(false);
    expect(await exists(path.join(t.root, 'docs', 'sub'))).toBe(false);
    expect((await list(alice)).length).toBe(2);
    expect(await exists(path.join(itemDir(folder), 'sub', 'b.txt'))).toBe(true);

    // A scope moved away from the place: 403 too.
    const mine = await trash(bob, '/mine.txt');
    await fs.mkdir(path.join(t.root, 'elsewhere'));
    await setUser('bob', { scope: '/elsewhere' });
    const res = await restore(bob, mine.id);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('not in your scope');
    expect(await exists(path.join(itemDir(mine), 'mine.txt'))).toBe(true);
  });

  it('needs create', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await setUser('alice', { perm: { ...ALL, create: false } });
    expect((await restore(alice, item.id)).statusCode).toBe(403);
    expect(await exists(path.join(itemDir(item), 'a.txt'))).toBe(true);
  });
});

describe('another user’s trash', () => {
  it('is not found for restore and delete, and not listable but by an administrator', async () => {
    const item = await trash(bob, '/mine.txt');
    expect((await restore(alice, item.id)).statusCode).toBe(404);
    expect((await t.req(alice, { method: 'DELETE', url: `/api/trash/${item.id}` })).statusCode).toBe(404);
    expect((await t.get(alice, `/api/trash?user=${await userId('bob')}`)).statusCode).toBe(403);
    expect(await exists(path.join(itemDir(item), 'mine.txt'))).toBe(true);

    const admin = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: 'files-password-for-tests' },
    });
    const adminToken = admin.body;
    const seen = await list(adminToken, `?user=${await userId('bob')}`);
    expect(seen.map((i) => i.id)).toEqual([item.id]);
    // Listing is all an administrator does with someone else's trash.
    expect((await restore(adminToken, item.id)).statusCode).toBe(404);
    expect((await t.req(adminToken, { method: 'DELETE', url: `/api/trash/${item.id}` })).statusCode).toBe(
      404,
    );
    expect((await t.get(adminToken, '/api/trash?user=9999')).statusCode).toBe(404);
    // Emptying one's own trash leaves everyone else's.
    expect((await t.req(alice, { method: 'DELETE', url: '/api/trash' })).statusCode).toBe(204);
    expect(await exists(path.join(itemDir(item), 'mine.txt'))).toBe(true);
  });
});

describe('deleting forever', () => {
  it('removes the bytes and the record; needs delete', async () => {
    const item = await trash(alice, '/docs');
    await setUser('alice', { perm: { ...ALL, delete: false } });
    expect((await t.req(alice, { method: 'DELETE', url: `/api/trash/${item.id}` })).statusCode).toBe(403);
    expect(await exists(itemDir(item))).toBe(true);
    await setUser('alice', { perm: ALL });
    const res = await t.req(alice, { method: 'DELETE', url: `/api/trash/${item.id}` });
    expect(res.statusCode).toBe(204);
    expect(await exists(itemDir(item))).toBe(false);
    expect(await list(alice)).toEqual([]);
    expect((await restore(alice, item.id)).statusCode).toBe(404);
  });

  it('empties the trash', async () => {
    const a = await trash(alice, '/docs/a.txt');
    const b = await trash(alice, '/docs/sub');
    const res = await t.req(alice, { method: 'DELETE', url: '/api/trash' });
    expect(res.statusCode).toBe(204);
    expect(await list(alice)).toEqual([]);
    expect(await exists(itemDir(a))).toBe(false);
    expect(await exists(itemDir(b))).toBe(false);
  });

  it('purges items older than the retention, as of the clock it is given', async () => {
    const item = await trash(alice, '/docs/a.txt');
    const day = 24 * 3600 * 1000;
    expect(await purgeExpired(t.ctx, item.deletedAt + 29 * day)).toBe(0);
    expect(await exists(itemDir(item))).toBe(true);
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: true, retentionDays: 0 },
    });
    expect(await purgeExpired(t.ctx, item.deletedAt + 3650 * day)).toBe(0);
    expect((await list(alice))[0]!.expiresAt).toBe(0);
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: true, retentionDays: 30 },
    });
    expect(await purgeExpired(t.ctx, item.deletedAt + 30 * day + 1)).toBe(1);
    expect(await exists(itemDir(item))).toBe(false);
    expect(await list(alice)).toEqual([]);
  });
});

describe('a deleted account', () => {
  it('takes its trash with it, through the API at once and through the purge otherwise', async () => {
    const mine = await trash(bob, '/mine.txt');
    const adminToken = (
      await t.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: 'admin', password: 'files-password-for-tests' },
      })
    ).body;
    const res = await t.req(adminToken, {
      method: 'DELETE',
      url: `/api/users/${mine.userID}`,
      payload: { current_password: 'files-password-for-tests' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.ctx.store.trash.list(mine.userID)).toEqual([]);
    expect(await exists(itemDir(mine))).toBe(false);

    // Deleted another way (the CLI): the next purge removes what is left, whatever the retention.
    const item = await trash(alice, '/docs/a.txt');
    await t.ctx.store.users.delete(item.userID);
    expect(await purgeExpired(t.ctx, item.deletedAt)).toBe(1);
    expect(await exists(itemDir(item))).toBe(false);
    expect(await t.ctx.store.trash.get(item.id)).toBeUndefined();
  });
});

describe('the trash off', () => {
  it('makes a delete permanent, as before', async () => {
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    const res = await del(alice, '/docs');
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-delete-outcome']).toBe('permanent');
    expect(await exists(path.join(t.root, 'docs'))).toBe(false);
    expect(await list(alice)).toEqual([]);
    expect(await exists(path.join(trashDir, String(await userId('alice'))))).toBe(false);
  });

  it('makes the entry a restore with override=true replaces gone for good, as before', async () => {
    const item = await trash(alice, '/docs/a.txt');
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    await fs.writeFile(path.join(t.root, 'docs', 'a.txt'), 'new alpha');
    const res = await restore(alice, item.id, '?override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'docs', 'a.txt'), 'utf8')).toBe('alpha');
    expect(await list(alice)).toEqual([]);
    expect(await fs.readdir(path.join(trashDir, String(await userId('alice'))))).toEqual([]);
  });
});

/** A small tmpfs mounted inside the root: a second file system, as a mount point in a served folder is. */
function mountTmpfs(dir: string): boolean {
  const reason = 'needs root and mount(8) to make a second file system inside the root';
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error(`cannot mount a tmpfs: ${reason} (CI runs as root)`);
    console.warn(`skipped: cannot mount a tmpfs: ${reason}`);
    return false;
  }
}

describe('an item on another file system', () => {
  it('is copied into the trash then removed, and the answer says so; restoring copies it back', async () => {
    const mnt = path.join(t.root, 'mnt');
    await fs.mkdir(mnt);
    if (!mountTmpfs(mnt)) return;
    try {
      await fs.mkdir(path.join(mnt, 'dir'));
      await fs.writeFile(path.join(mnt, 'dir', 'c.txt'), 'charlie');
      await fs.symlink('c.txt', path.join(mnt, 'dir', 'link'));
      const res = await del(alice, '/mnt/dir');
      expect(res.statusCode, res.body).toBe(204);
      expect(res.headers['x-delete-outcome']).toBe('trash');
      expect(res.headers['x-trash-copied']).toBe('true');
      expect(await exists(path.join(mnt, 'dir'))).toBe(false);
      const item = (await list(alice))[0]!;
      expect(item).toMatchObject({ path: '/mnt/dir', size: 7, isDir: true });
      expect(await fs.readFile(path.join(itemDir(item), 'dir', 'c.txt'), 'utf8')).toBe('charlie');
      expect(await fs.readlink(path.join(itemDir(item), 'dir', 'link'))).toBe('c.txt');

      const back = await restore(alice, item.id);
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json()).toEqual({ path: '/mnt/dir', recreatedFolders: false, copied: true });
      expect(await fs.readFile(path.join(mnt, 'dir', 'c.txt'), 'utf8')).toBe('charlie');
      expect(await fs.readlink(path.join(mnt, 'dir', 'link'))).toBe('c.txt');
      expect(await exists(itemDir(item))).toBe(false);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });

  it('leaves no half copy behind when the copy back fails, and keeps the item', async () => {
    const mnt = path.join(t.root, 'mnt');
    await fs.mkdir(mnt);
    if (!mountTmpfs(mnt)) return;
    try {
      await fs.mkdir(path.join(mnt, 'dir'));
      await fs.writeFile(path.join(mnt, 'dir', 'a.bin'), Buffer.alloc(1536 * 1024, 1));
      await fs.writeFile(path.join(mnt, 'dir', 'b.bin'), Buffer.alloc(1536 * 1024, 2));
      const item = await trash(alice, '/mnt/dir');
      // Room for one of the two files only.
      await fs.writeFile(path.join(mnt, 'filler'), Buffer.alloc(2 * 1024 * 1024));
      const res = await restore(alice, item.id);
      // A full disk is a server-side failure (500 today; a storage-specific status would do too).
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
      expect(await fs.readdir(mnt)).toEqual(['filler']);
      expect((await fs.readdir(path.join(itemDir(item), 'dir'))).sort()).toEqual(['a.bin', 'b.bin']);
      expect((await list(alice)).map((i) => i.id)).toEqual([item.id]);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});

describe('the trash folder’s place', () => {
  it('is beside the database when that is on the root’s file system, out of every user’s view', async () => {
    const other = await startFilesApp();
    try {
      const dir = serverPaths(other.ctx.config).trashDir;
      expect(dir).toBe(path.join(other.base, 'db', 'trash'));
      const token = await other.user('carol');
      await fs.writeFile(path.join(other.root, 'carol', 'x.txt'), 'x');
      const ino = (await fs.stat(path.join(other.root, 'carol', 'x.txt'))).ino;
      expect((await other.req(token, { method: 'DELETE', url: '/api/resources/x.txt' })).statusCode).toBe(
        204,
      );
      const [item] = (await other.get(token, '/api/trash')).json() as TrashItem[];
      expect((await fs.stat(path.join(dir, String(item!.userID), item!.id, 'x.txt'))).ino).toBe(ino);
    } finally {
      await other.close();
    }
  });
});
