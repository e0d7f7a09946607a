import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ARCHIVE_FORMATS } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { availableArchiveFormats } from '../src/files/archive/index.js';
import { ACCESS_TOKEN_SECONDS, shareAccessToken } from '../src/shares/links.js';
import type { StoredUser } from '../src/store/users.js';
import {
  deny,
  denyRe,
  PASSWORD as PASSWORD_OF_USERS,
  startFilesApp,
  type FilesApp,
} from './files-helpers.js';

let t: FilesApp;
let bob: string;
let home: string;

async function setup(overrides: Parameters<typeof startFilesApp>[0] = {}) {
  t = await startFilesApp(overrides);
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'docs/sub'), { recursive: true });
  await fs.mkdir(path.join(home, 'docs/secret'), { recursive: true });
  await fs.writeFile(path.join(home, 'docs/a.txt'), 'hello world');
  await fs.writeFile(path.join(home, 'docs/sub/b.txt'), 'bee');
  await fs.writeFile(path.join(home, 'docs/secret/s.txt'), 'SECRET');
  await fs.writeFile(path.join(home, 'docs/.hidden'), 'dot');
  await fs.writeFile(path.join(home, 'private.txt'), 'PRIVATE');
  await fs.writeFile(path.join(t.outside, 'out.txt'), 'OUTSIDE');
}

beforeEach(() => setup());
afterEach(async () => {
  await t.close();
});

/** Creates a link as bob; `body` is the POST /api/share body. */
async function share(p: string, body: Record<string, unknown> = {}, token = bob): Promise<string> {
  const res = await t.req(token, { method: 'POST', url: `/api/share${p}`, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().hash;
}

const pub = (url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
  t.app.inject({ method: 'GET', url, headers, ...(remoteAddress && { remoteAddress }) });

const bobUser = async (): Promise<StoredUser> => (await t.ctx.store.users.getByUsername('bob'))!;
const updateBob = async (change: (u: StoredUser) => void) => {
  const u = await bobUser();
  change(u);
  await t.ctx.store.users.update(u);
};

describe('GET /api/public/share of a file', () => {
  it('answers the file info without content, path "" and no token', async () => {
    const hash = await share('/docs/a.txt');
    const res = await pub(`/api/public/share/${hash}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const info = res.json();
    expect(info).toMatchObject({ path: '', name: 'a.txt', size: 11, isDir: false, type: 'text' });
    expect(info.content).toBeUndefined();
    expect(info.token).toBeUndefined();
    // The sub-path of a file link only names the download; it never selects anything else.
    const other = await pub(`/api/public/share/${hash}/private.txt`);
    expect(other.json()).toMatchObject({ path: '', name: 'a.txt' });
  });

  it('types text textImmutable when the owner may not modify', async () => {
    const hash = await share('/docs/a.txt');
    await updateBob((u) => (u.perm.modify = false));
    expect((await pub(`/api/public/share/${hash}`)).json().type).toBe('textImmutable');
  });
});

describe('GET /api/public/dl of a file', () => {
  it('serves the file as an attachment, inline on request, with ranges', async () => {
    const hash = await share('/docs/a.txt');
    const res = await pub(`/api/public/dl/${hash}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('hello world');
    expect(res.headers['content-disposition']).toBe("attachment; filename*=utf-8''a.txt");
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private');

    const inline = await pub(`/api/public/dl/${hash}/a.txt?inline=true`);
    expect(inline.headers['content-disposition']).toBe("inline; filename*=utf-8''a.txt");
    expect(inline.headers['content-type']).toMatch(/^text\/plain/);

    const range = await pub(`/api/public/dl/${hash}/a.txt`, { range: 'bytes=6-' });
    expect(range.statusCode).toBe(206);
    expect(range.body).toBe('world');
    expect(range.headers['content-range']).toBe('bytes 6-10/11');
    // A file link ignores what follows the hash.
    expect((await pub(`/api/public/dl/${hash}/private.txt`)).body).toBe('hello world');
  });

  it('answers HEAD with 405 and a bare prefix with a redirect', async () => {
    const hash = await share('/docs/a.txt');
    expect((await t.app.inject({ method: 'HEAD', url: `/api/public/dl/${hash}` })).statusCode).toBe(405);
    expect((await t.app.inject({ method: 'HEAD', url: `/api/public/share/${hash}` })).statusCode).toBe(405);
    const bare = await pub('/api/public/share');
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/api/public/share/');
    expect((await pub('/api/public/dl')).headers.location).toBe('/api/public/dl/');
  });
});

describe('folder links', () => {
  it('lists the folder with share-relative paths, sorted by name, the root name everywhere', async () => {
    const hash = await share('/docs/');
    const root = (await pub(`/api/public/share/${hash}`)).json();
    expect(root).toMatchObject({ path: '/', name: 'docs', isDir: true, numDirs: 2, numFiles: 2 });
    expect(root.sorting).toEqual({ by: 'name', asc: false });
    // Folders first, as every File Browser listing.
    expect(root.items.map((i: { path: string }) => i.path)).toEqual([
      '/secret',
      '/sub',
      '/.hidden',
      '/a.txt',
    ]);
    expect(root.items.find((i: { name: string }) => i.name === 'a.txt').type).toBe('text');
    const sub = (await pub(`/api/public/share/${hash}/sub/`)).json();
    expect(sub).toMatchObject({ path: '/sub', name: 'docs', numFiles: 1 });
    expect(sub.items.map((i: { path: string }) => i.path)).toEqual(['/sub/b.txt']);
    const file = (await pub(`/api/public/share/${hash}/sub/b.txt`)).json();
    expect(file).toMatchObject({ path: '/sub/b.txt', name: 'b.txt', size: 3 });
    expect(file.content).toBeUndefined();
    const missing = await pub(`/api/public/share/${hash}/nope.txt`);
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('404 Not Found\n');
  });

  it('downloads files below the folder and the folder as an archive', async () => {
    const hash = await share('/docs/');
    const file = await pub(`/api/public/dl/${hash}/sub/b.txt`);
    expect(file.body).toBe('bee');
    expect(file.headers['content-disposition']).toBe("attachment; filename*=utf-8''b.txt");

    const zip = await pub(`/api/public/dl/${hash}`);
    expect(zip.statusCode).toBe(200);
    expect(zip.headers['content-disposition']).toBe("attachment; filename*=utf-8''docs.zip");
    const zipFile = path.join(t.base, 'share.zip');
    await fs.writeFile(zipFile, zip.rawPayload);
    expect(execFileSync('unzip', ['-Z1', zipFile]).toString().trim().split('\n').sort()).toEqual([
      '.hidden',
      'a.txt',
      'secret/',
      'secret/s.txt',
      'sub/',
      'sub/b.txt',
    ]);

    const some = await pub(
      `/api/public/dl/${hash}/?files=${encodeURIComponent('/a.txt,/sub/b.txt')}&algo=tar`,
    );
    expect(some.headers['content-disposition']).toBe("attachment; filename*=utf-8''_docs.tar");
    const tarList = execFileSync('tar', ['-tf', '-'], { input: some.rawPayload }).toString().trim();
    expect(tarList.split('\n').sort()).toEqual(['a.txt', 'sub/b.txt']);

    const subTar = await pub(`/api/public/dl/${hash}/sub?algo=tar`);
    expect(subTar.headers['content-disposition']).toBe("attachment; filename*=utf-8''sub.tar");
  });

  it('streams the folder in every archive format this server can write', async () => {
    const hash = await share('/docs/');
    const formats = availableArchiveFormats();
    expect(formats.length).toBeGreaterThanOrEqual(4);
    for (const algo of formats) {
      const res = await pub(`/api/public/dl/${hash}?algo=${algo}`);
      expect(res.statusCode, algo).toBe(200);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename*=utf-8''docs${ARCHIVE_FORMATS[algo]}`,
      );
      expect(res.rawPayload.length).toBeGreaterThan(0);
    }
    const bad = await pub(`/api/public/dl/${hash}?algo=rar`);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toBe('400 Bad Request (format not implemented: rar)\n');
  });

  it('never lets a sub-path leave the folder', async () => {
    const hash = await share('/docs/sub/');
    // Encoded slashes reach the server; the router cleans such paths by redirecting, and the
    // cleaned path has no link hash left in it.
    for (const escape of ['/..%2fa.txt', '/..%2F..%2Fprivate.txt', '/b.txt%2f..%2f..%2f..%2fprivate.txt']) {
      for (const kind of ['share', 'dl']) {
        const res = await pub(`/api/public/${kind}/${hash}${escape}`);
        expect(res.statusCode, escape).toBe(301);
        expect(res.headers.location).not.toContain(hash);
      }
    }
    // Plain dot segments never even leave the client (URL parsing resolves them).
    for (const kind of ['share', 'dl']) {
      const res = await pub(`/api/public/${kind}/${hash}/../a.txt`);
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe('404 Not Found\n');
    }
    const backslash = await pub(`/api/public/share/${hash}/..%5Ca.txt`);
    expect(backslash.statusCode).toBe(400);
    expect(backslash.body).toBe('400 Bad Request (the path contains a backslash)\n');
  });

  it('confines symbolic links to the shared folder', async () => {
    await fs.symlink('../private.txt', path.join(home, 'docs/up.txt'));
    await fs.symlink(path.join(t.outside, 'out.txt'), path.join(home, 'docs/out.txt'));
    await fs.symlink(path.join(home, 'docs/secret'), path.join(home, 'docs/sub/back'));
    await fs.symlink('b.txt', path.join(home, 'docs/sub/same.txt'));
    const hash = await share('/docs/sub/');
    const listing = (await pub(`/api/public/share/${hash}`)).json();
    expect(listing.items.map((i: { name: string }) => i.name)).toEqual(['b.txt', 'same.txt']);
    expect((await pub(`/api/public/dl/${hash}/same.txt`)).body).toBe('bee');
    for (const p of ['/back', '/back/s.txt']) {
      for (const kind of ['share', 'dl']) {
        const res = await pub(`/api/public/${kind}/${hash}${p}`);
        expect(res.statusCode, `${kind} ${p}`).toBe(403);
        expect(res.body).toBe('403 Forbidden\n');
      }
    }
    const tar = await pub(`/api/public/dl/${hash}?algo=tar`);
    expect(tar.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);

    const docs = await share('/docs/');
    for (const p of ['/up.txt', '/out.txt']) {
      expect((await pub(`/api/public/dl/${docs}${p}`)).statusCode).toBe(403);
    }
    const zip = await pub(`/api/public/dl/${docs}`);
    expect(zip.rawPayload.includes(Buffer.from('PRIVATE'))).toBe(false);
    expect(zip.rawPayload.includes(Buffer.from('OUTSIDE'))).toBe(false);
  });

  it('refuses to serve a link whose item became a link leaving the scope', async () => {
    const hash = await share('/docs/a.txt');
    await fs.rm(path.join(home, 'docs/a.txt'));
    await fs.symlink(path.join(t.outside, 'out.txt'), path.join(home, 'docs/a.txt'));
    const res = await pub(`/api/public/dl/${hash}`);
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain('OUTSIDE');
  });
});

describe('the owner’s live permissions and rules', () => {
  it('answers 403 once the owner loses share or download, and serves again when given back', async () => {
    const file = await share('/docs/a.txt');
    const folder = await share('/docs/');
    for (const perm of ['share', 'download'] as const) {
      await updateBob((u) => (u.perm[perm] = false));
      for (const url of [
        `/api/public/share/${file}`,
        `/api/public/dl/${file}`,
        `/api/public/share/${folder}/sub`,
        `/api/public/dl/${folder}`,
      ]) {
        const res = await pub(url);
        expect(res.statusCode, `${perm} ${url}`).toBe(403);
        expect(res.body).toBe('403 Forbidden (the owner of this link may no longer share it)\n');
      }
      await updateBob((u) => (u.perm[perm] = true));
      expect((await pub(`/api/public/dl/${file}`)).body).toBe('hello world');
    }
  });

  it('applies rules added after sharing, relative to the owner’s scope', async () => {
    const folder = await share('/docs/');
    const file = await share('/docs/secret/s.txt');
    await updateBob((u) => (u.rules = [deny('/docs/secret')]));

    const listing = (await pub(`/api/public/share/${folder}`)).json();
    expect(listing.items.map((i: { name: string }) => i.name)).toEqual(['sub', '.hidden', 'a.txt']);
    for (const url of [
      `/api/public/share/${folder}/secret`,
      `/api/public/share/${folder}/secret/s.txt`,
      `/api/public/dl/${folder}/secret/s.txt`,
      `/api/public/share/${file}`,
      `/api/public/dl/${file}`,
    ]) {
      const res = await pub(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toBe('403 Forbidden\n');
    }
    const zip = await pub(`/api/public/dl/${folder}`);
    expect(zip.statusCode).toBe(200);
    expect(zip.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);
    expect((await pub(`/api/public/dl/${folder}/a.txt`)).body).toBe('hello world');
  });

  it('applies global and regex rules, and denies the whole link when its root is denied', async () => {
    const folder = await share('/docs/');
    const settings = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...settings, rules: [denyRe('\\.txt$')] });
    const listing = (await pub(`/api/public/share/${folder}`)).json();
    expect(listing.items.map((i: { name: string }) => i.name)).toEqual(['secret', 'sub', '.hidden']);
    expect((await pub(`/api/public/dl/${folder}/a.txt`)).statusCode).toBe(403);

    await t.ctx.store.settings.save({ ...settings, rules: [deny('/docs')] });
    expect((await pub(`/api/public/share/${folder}`)).statusCode).toBe(403);
    expect((await pub(`/api/public/dl/${folder}`)).statusCode).toBe(403);
  });

  it('hides dotfiles when the owner hides them', async () => {
    const folder = await share('/docs/');
    await updateBob((u) => (u.hideDotfiles = true));
    const listing = (await pub(`/api/public/share/${folder}`)).json();
    expect(listing.items.map((i: { name: string }) => i.name)).toEqual(['secret', 'sub', 'a.txt']);
    expect((await pub(`/api/public/dl/${folder}/.hidden`)).statusCode).toBe(403);
  });

  it('answers 404 once the owner is deleted', async () => {
    const hash = await share('/docs/a.txt');
    // A user may delete their own account.
    const res = await t.req(bob, {
      method: 'DELETE',
      url: `/api/users/${(await bobUser()).id}`,
      payload: { current_password: PASSWORD_OF_USERS },
    });
    expect(res.statusCode).toBe(200);
    expect((await pub(`/api/public/share/${hash}`)).statusCode).toBe(404);
  });
});

describe('links follow their item', () => {
  const patch = (src: string, dst: string) =>
    t.req(bob, {
      method: 'PATCH',
      url: `/api/resources${src}?action=rename&destination=${encodeURIComponent(dst)}`,
    });

  it('follows a rename and never serves a new file created under the old name', async () => {
    const hash = await share('/docs/a.txt');
    expect((await patch('/docs/a.txt', '/docs/renamed.txt')).statusCode).toBe(200);
    await fs.writeFile(path.join(home, 'docs/a.txt'), 'IMPOSTOR');
    const res = await pub(`/api/public/dl/${hash}`);
    expect(res.body).toBe('hello world');
    expect(res.headers['content-disposition']).toBe("attachment; filename*=utf-8''renamed.txt");
  });

  it('follows a move of a parent folder', async () => {
    const hash = await share('/docs/sub/');
    await fs.mkdir(path.join(home, 'archive'));
    expect((await patch('/docs', '/archive/docs')).statusCode).toBe(200);
    await fs.mkdir(path.join(home, 'docs/sub'), { recursive: true });
    const listing = (await pub(`/api/public/share/${hash}`)).json();
    expect(listing.items.map((i: { name: string }) => i.name)).toEqual(['b.txt']);
    expect((await t.ctx.store.shares.get(hash))!.path).toBe('/archive/docs/sub/');
  });

  it('dies with a delete, even when the name comes back', async () => {
    const hash = await share('/docs/');
    const res = await t.req(bob, { method: 'DELETE', url: '/api/resources/docs' });
    expect(res.statusCode).toBe(204);
    await fs.mkdir(path.join(home, 'docs'));
    await fs.writeFile(path.join(home, 'docs/new.txt'), 'NEW');
    for (const kind of ['share', 'dl']) {
      const gone = await pub(`/api/public/${kind}/${hash}`);
      expect(gone.statusCode).toBe(404);
      expect(gone.body).toBe('404 Not Found\n');
    }
  });
});

describe('links serve only the item they were made for', () => {
  /** Every public way to a link's item (info, download or archive, a member below a folder). */
  const ways = (hash: string, below = '') => [
    `/api/public/share/${hash}${below}`,
    `/api/public/dl/${hash}${below}`,
  ];
  const expectGone = async (urls: string[], secret: string) => {
    for (const url of urls) {
      const res = await pub(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).toBe('404 Not Found\n');
      expect(res.body).not.toContain(secret);
    }
  };

  it('serves nothing once the file is removed outside the server and a new one takes its name', async () => {
    const hash = await share('/docs/a.txt');
    // As the runner's `rm` or a sync tool on the host: nothing the server hears of.
    await fs.rm(path.join(home, 'docs/a.txt'));
    expect(await t.ctx.store.shares.get(hash)).toBeDefined();
    const put = await t.req(bob, {
      method: 'POST',
      url: '/api/resources/docs/a.txt',
      payload: 'NEW CONTENT',
    });
    expect(put.statusCode).toBe(200);
    await expectGone(ways(hash), 'NEW CONTENT');
  });

  it('serves nothing once the folder is moved outside the server and a new one takes its name', async () => {
    const hash = await share('/docs/');
    // As the runner's `mv docs docs-old`, then a new docs/ with a secret in it.
    await fs.rename(path.join(home, 'docs'), path.join(home, 'docs-old'));
    await fs.mkdir(path.join(home, 'docs'));
    await fs.writeFile(path.join(home, 'docs/secret.txt'), 'NEW SECRET');
    await expectGone([...ways(hash), ...ways(hash, '/secret.txt')], 'NEW SECRET');
  });

  it('keeps serving a file its owner saves through the server', async () => {
    const hash = await share('/docs/a.txt');
    // A save puts a new file in place (one rename): the link follows it, as it followed the old one.
    const save = await t.req(bob, { method: 'PUT', url: '/api/resources/docs/a.txt', payload: 'edited' });
    expect(save.statusCode).toBe(200);
    const res = await pub(`/api/public/dl/${hash}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('edited');
  });

  it('hands a link on only to a save of its own place, not of another name of the same file', async () => {
    const hash = await share('/docs/a.txt');
    // A hard link made outside the server: one file, two names.
    await fs.mkdir(path.join(home, 'snap'));
    await fs.link(path.join(home, 'docs/a.txt'), path.join(home, 'snap/a.txt'));
    const save = await t.req(bob, { method: 'PUT', url: '/api/resources/snap/a.txt', payload: 'OTHER FILE' });
    expect(save.statusCode).toBe(200);
    // The shared place is untouched: the link serves it still.
    expect((await pub(`/api/public/dl/${hash}`)).body).toBe('hello world');
    // Moved over the shared place, the other file is not the item: the link serves nothing.
    const moved = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/snap/a.txt?action=rename&destination=%2Fdocs%2Fa.txt&override=true',
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await expectGone(ways(hash), 'OTHER FILE');
  });

  it('records the item of a link made before identities at its first open, and holds it to it', async () => {
    const bobNow = await bobUser();
    const old = await t.ctx.store.shares.create({
      hash: 'made-before-identities-0',
      path: '/docs/a.txt',
      rootId: 'default',
      rootPath: `${bobNow.scope}/docs/a.txt`,
      itemId: '',
      userId: bobNow.id,
      expire: 0,
      passwordHash: '',
    });
    expect((await pub(`/api/public/dl/${old.hash}`)).body).toBe('hello world');
    expect((await t.ctx.store.shares.get(old.hash))!.itemId).not.toBe('');
    await fs.rm(path.join(home, 'docs/a.txt'));
    await fs.writeFile(path.join(home, 'docs/a.txt'), 'IMPOSTOR');
    await expectGone(ways(old.hash), 'IMPOSTOR');
  });

  it('makes no link to an item deleted while its password is hashed, or one that serves nothing', async () => {
    await fs.writeFile(path.join(home, 'race1.txt'), 'first');
    const [created, deleted] = await Promise.all([
      t.req(bob, { method: 'POST', url: '/api/share/race1.txt', payload: { password: 'pass-word-1' } }),
      // The delete comes while the password is hashed (bcrypt takes tens of milliseconds).
      new Promise((r) => setTimeout(r, 20)).then(() =>
        t.req(bob, { method: 'DELETE', url: '/api/resources/race1.txt' }),
      ),
    ]);
    expect(deleted.statusCode).toBe(204);
    // Someone else uploads a file of the same name.
    await fs.writeFile(path.join(home, 'race1.txt'), 'SOMEONE ELSE');
    if (created.statusCode !== 200) {
      expect(created.statusCode).toBe(404);
      expect(await t.ctx.store.shares.list()).toEqual([]);
      return;
    }
    const headers = { 'X-SHARE-PASSWORD': 'pass-word-1' };
    for (const url of ways(created.json().hash)) {
      const res = await pub(url, headers);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('SOMEONE ELSE');
    }
  });

  it('refuses to share a missing item with 404 and stores no link', async () => {
    const res = await t.req(bob, {
      method: 'POST',
      url: '/api/share/docs/none.txt',
      payload: { password: 'pass-word-1' },
    });
    expect(res.statusCode).toBe(404);
    expect(await t.ctx.store.shares.list()).toEqual([]);
  });
});

describe('expiry', () => {
  it('answers 404 for an expired link and removes it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await t.ctx.store.shares.create({
      hash: 'expired-link-0123456789',
      path: '/docs/a.txt',
      rootId: 'default',
      rootPath: `${(await bobUser()).scope}/docs/a.txt`,
      // As made before identities were recorded: the first open records it.
      itemId: '',
      userId: (await bobUser()).id,
      expire: now - 1,
      passwordHash: '',
    });
    const live = await t.ctx.store.shares.create({
      hash: 'live-link-0123456789abc',
      path: '/docs/a.txt',
      rootId: 'default',
      rootPath: `${(await bobUser()).scope}/docs/a.txt`,
      // As made before identities were recorded: the first open records it.
      itemId: '',
      userId: (await bobUser()).id,
      expire: now + 3600,
      passwordHash: '',
    });
    for (const kind of ['share', 'dl']) {
      const res = await pub(`/api/public/${kind}/${expired.hash}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe('404 Not Found\n');
    }
    expect(await t.ctx.store.shares.get(expired.hash)).toBeUndefined();
    expect((await pub(`/api/public/dl/${live.hash}`)).body).toBe('hello world');
    expect((await pub('/api/public/share/')).statusCode).toBe(404);
    expect((await pub('/api/public/dl/unknown')).statusCode).toBe(404);
  });
});

describe('password-protected links', () => {
  const PASSWORD = 'p@ss wörd+100%';
  const header = (p: string) => ({ 'x-share-password': encodeURIComponent(p) });

  it('asks for the password, refuses a wrong one, and hands out a token for the right one', async () => {
    const hash = await share('/docs/', { password: `  ${PASSWORD}  ` });
    const none = await pub(`/api/public/share/${hash}`);
    expect(none.statusCode).toBe(401);
    expect(none.body).toBe('401 Unauthorized (this link is protected by a password)\n');
    const wrong = await pub(`/api/public/share/${hash}`, header('guess'));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toBe('401 Unauthorized (wrong password)\n');
    // Sent without encoding, "+" would be read as a space (query-style unescaping, as File Browser).
    const raw = await pub(`/api/public/share/${hash}`, { 'x-share-password': 'p@ss w%C3%B6rd+100%25' });
    expect(raw.statusCode).toBe(401);
    const malformed = await pub(`/api/public/share/${hash}`, { 'x-share-password': '100%' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.body).toBe('400 Bad Request (the X-SHARE-PASSWORD header is not valid URL encoding)\n');

    const ok = await pub(`/api/public/share/${hash}`, header(PASSWORD));
    expect(ok.statusCode).toBe(200);
    const { token, items } = ok.json();
    expect(items).toHaveLength(4);
    expect(token).toMatch(/^\d+\.[A-Za-z0-9_-]+$/);
    expect(items.every((i: { token?: string }) => i.token === undefined)).toBe(true);
    // The token is short-lived: it expires within hours, not with the link.
    const exp = Number(token.split('.')[0]);
    expect(exp - Date.now() / 1000).toBeLessThanOrEqual(ACCESS_TOKEN_SECONDS);
    expect(exp - Date.now() / 1000).toBeGreaterThan(ACCESS_TOKEN_SECONDS - 60);

    const dl = await pub(`/api/public/dl/${hash}/a.txt?token=${encodeURIComponent(token)}`);
    expect(dl.body).toBe('hello world');
    const sub = await pub(`/api/public/share/${hash}/sub?token=${encodeURIComponent(token)}`);
    expect(sub.statusCode).toBe(200);
    // A request authorised by its token gets the same token back: it is never extended.
    expect(sub.json().token).toBe(token);
    const dlWithPassword = await pub(`/api/public/dl/${hash}/a.txt`, header(PASSWORD));
    expect(dlWithPassword.body).toBe('hello world');
    expect((await pub(`/api/public/dl/${hash}/a.txt`)).statusCode).toBe(401);
    expect((await pub(`/api/public/dl/${hash}/a.txt?token=${token}x`)).statusCode).toBe(401);
  });

  it('refuses an expired token and a token of another link', async () => {
    const hash = await share('/docs/', { password: PASSWORD });
    const other = await share('/docs/sub/', { password: PASSWORD });
    const stored = (await t.ctx.store.shares.get(hash))!;
    const expired = await shareAccessToken(
      t.ctx.store.shareGrants,
      stored,
      Date.now() - (ACCESS_TOKEN_SECONDS + 1) * 1000,
    );
    const fresh = await shareAccessToken(t.ctx.store.shareGrants, stored);
    for (const kind of ['share', 'dl']) {
      const res = await pub(`/api/public/${kind}/${hash}/a.txt?token=${expired}`);
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('401 Unauthorized (this link is protected by a password)\n');
      expect((await pub(`/api/public/${kind}/${hash}/a.txt?token=${fresh}`)).statusCode).toBe(200);
      expect((await pub(`/api/public/${kind}/${other}/b.txt?token=${fresh}`)).statusCode).toBe(401);
    }
  });

  it('leaves links without a password open and ignores tokens and passwords sent to them', async () => {
    const hash = await share('/docs/a.txt', { password: '   ' });
    expect((await t.ctx.store.shares.get(hash))!.passwordHash).toBe('');
    const res = await pub(`/api/public/share/${hash}?token=nonsense`, header('whatever'));
    expect(res.statusCode).toBe(200);
    expect(res.json().token).toBeUndefined();
  });
});

describe('password guessing', () => {
  beforeEach(async () => {
    await t.close();
    await setup({ loginRateLimit: 3, loginRateWindowSeconds: 600 });
  });

  const guess = (hash: string, password: string, address = '10.0.0.1') =>
    pub(`/api/public/share/${hash}`, { 'x-share-password': encodeURIComponent(password) }, address);

  it('throttles wrong passwords per address and link with 429 and Retry-After, even for the right one', async () => {
    const hash = await share('/docs/', { password: 'right' });
    for (let i = 0; i < 3; i++) expect((await guess(hash, 'wrong')).statusCode).toBe(401);
    const blocked = await guess(hash, 'right');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.body).toBe('429 Too Many Requests (too many password attempts, try again later)\n');
    const retry = Number(blocked.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(600);
    expect(
      (await pub(`/api/public/dl/${hash}/a.txt`, { 'x-share-password': 'right' }, '10.0.0.1')).statusCode,
    ).toBe(429);
    // Someone who already entered the password keeps their token.
    const token = await shareAccessToken(t.ctx.store.shareGrants, (await t.ctx.store.shares.get(hash))!);
    expect((await pub(`/api/public/dl/${hash}/a.txt?token=${token}`, {}, '10.0.0.1')).statusCode).toBe(200);
  });

  it('lets the right password in from another address while one address guesses', async () => {
    const hash = await share('/docs/', { password: 'right' });
    for (let i = 0; i < 3; i++) expect((await guess(hash, 'wrong', `10.0.0.${i + 1}`)).statusCode).toBe(401);
    expect((await guess(hash, 'right', '10.0.9.9')).statusCode).toBe(200);
    // The link is under attack: each further address gets a quarter of the limit (here one guess).
    expect((await guess(hash, 'wrong', '10.0.8.8')).statusCode).toBe(401);
    expect((await guess(hash, 'right', '10.0.8.8')).statusCode).toBe(429);
  });

  it('throttles one address across links', async () => {
    const first = await share('/docs/', { password: 'right' });
    const second = await share('/docs/sub/', { password: 'right' });
    for (let i = 0; i < 3; i++) expect((await guess(first, 'wrong')).statusCode).toBe(401);
    expect((await guess(second, 'right')).statusCode).toBe(429);
    expect((await guess(second, 'right', '10.0.0.2')).statusCode).toBe(200);
    // Asking without a password is not a guess.
    for (let i = 0; i < 5; i++) expect((await pub(`/api/public/share/${second}`)).statusCode).toBe(401);
    expect((await guess(second, 'right', '10.0.0.3')).statusCode).toBe(200);
  });
});
