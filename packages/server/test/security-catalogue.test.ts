import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Permissions } from '@filebrowser/contract';
import { ALL, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * The attack catalogue, one named test per class that the other security files do not
 * already own (docs/security.md maps every class to its tests): path escapes through every
 * endpoint that takes a path, the share cases, folders the server makes for users, and the
 * permission matrix of the public endpoints.
 */

const MARK = 'TOPSECRET';

interface Answer {
  statusCode: number;
  body: string;
  rawPayload: Buffer;
}

/**
 * Sends a request over a real socket with its path exactly as given: an injected request (like a
 * browser) would resolve `..` before the server sees it, an attacker's client does not.
 */
function send(port: number, token: string | undefined, opts: InjectOptions): Promise<Answer> {
  const payload =
    opts.payload === undefined
      ? undefined
      : typeof opts.payload === 'string'
        ? opts.payload
        : JSON.stringify(opts.payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method,
        path: String(opts.url),
        headers: {
          ...(token && { 'x-auth': token }),
          ...(payload !== undefined &&
            typeof opts.payload !== 'string' && { 'content-type': 'application/json' }),
          ...(opts.headers as Record<string, string>),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const rawPayload = Buffer.concat(chunks);
          resolve({ statusCode: res.statusCode ?? 0, rawPayload, body: rawPayload.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Everything below `dir`, names and contents, to prove that nothing there changed. */
async function inventory(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(e.parentPath, e.name);
    const st = await fs.lstat(full);
    out[path.relative(dir, full)] = st.isFile()
      ? await fs.readFile(full, 'utf8')
      : st.isSymbolicLink()
        ? `-> ${await fs.readlink(full)}`
        : 'dir';
  }
  return out;
}

describe('path escapes through every endpoint that takes a path', () => {
  let t: FilesApp;
  let eve: string;
  let home: string;
  let shareHash: string;
  let port: number;
  let before: { outside: Record<string, string>; bob: Record<string, string> };

  /** Request paths that try to leave eve's scope, as they appear in a URL. */
  const ESCAPES: Record<string, string> = {
    'dot-dot to the outside': '../../outside/TOPSECRET.txt',
    'dot-dot into another user': '../bob/TOPSECRET.txt',
    'encoded dot-dot': '%2e%2e/%2e%2e/outside/TOPSECRET.txt',
    'encoded slashes': '..%2f..%2foutside%2fTOPSECRET.txt',
    backslashes: '..%5c..%5coutside%5cTOPSECRET.txt',
    'final link to the outside': 'out-file',
    'ancestor link to the outside': 'out-dir/TOPSECRET.txt',
    'dangling link to the outside': 'dangle',
    'link into another user': 'to-bob/TOPSECRET.txt',
    'NUL byte': 'pub%00/../../outside/TOPSECRET.txt',
  };

  /**
   * Every route that takes a path (the completeness test below holds this list against the app's
   * routes); `p` is the escape as it appears in the URL. The command runner's working folder and
   * arguments are covered by security-runner.test.ts and runner-arguments.test.ts.
   */
  const ENDPOINTS: Record<string, { routes: string[]; request: (p: string) => InjectOptions }> = {
    'list or read': {
      routes: ['/api/resources/*'],
      request: (p) => ({ method: 'GET', url: `/api/resources/${p}` }),
    },
    checksum: { routes: [], request: (p) => ({ method: 'GET', url: `/api/resources/${p}?checksum=sha256` }) },
    'recursive listing': {
      routes: ['/api/resources/recursive/*'],
      request: (p) => ({ method: 'GET', url: `/api/resources/recursive/${p}` }),
    },
    'create a file': {
      routes: [],
      request: (p) => ({ method: 'POST', url: `/api/resources/${p}`, payload: 'x' }),
    },
    'create a folder': { routes: [], request: (p) => ({ method: 'POST', url: `/api/resources/${p}/` }) },
    'replace a file': {
      routes: [],
      request: (p) => ({ method: 'POST', url: `/api/resources/${p}?override=true`, payload: 'x' }),
    },
    save: { routes: [], request: (p) => ({ method: 'PUT', url: `/api/resources/${p}`, payload: 'x' }) },
    delete: { routes: [], request: (p) => ({ method: 'DELETE', url: `/api/resources/${p}` }) },
    'copy from': {
      routes: [],
      request: (p) => ({ method: 'PATCH', url: `/api/resources/${p}?action=copy&destination=%2Fstolen.txt` }),
    },
    'move from': {
      routes: [],
      request: (p) => ({
        method: 'PATCH',
        url: `/api/resources/${p}?action=rename&destination=%2Fstolen.txt`,
      }),
    },
    'copy to': {
      routes: [],
      request: (p) => ({
        method: 'PATCH',
        url: `/api/resources/pub/mine.txt?action=copy&destination=${encodeURIComponent('/' + decodeURIComponent(p))}&override=true`,
      }),
    },
    'move to': {
      routes: [],
      request: (p) => ({
        method: 'PATCH',
        url: `/api/resources/pub/mine.txt?action=rename&destination=${encodeURIComponent('/' + decodeURIComponent(p))}&override=true`,
      }),
    },
    'raw download': {
      routes: ['/api/raw/*'],
      request: (p) => ({ method: 'GET', url: `/api/raw/${p}?inline=true` }),
    },
    'archive download': { routes: [], request: (p) => ({ method: 'GET', url: `/api/raw/${p}?algo=tar` }) },
    preview: {
      routes: ['/api/preview/:size/*'],
      request: (p) => ({ method: 'GET', url: `/api/preview/thumb/${p}` }),
    },
    subtitle: { routes: ['/api/subtitle/*'], request: (p) => ({ method: 'GET', url: `/api/subtitle/${p}` }) },
    search: {
      routes: ['/api/search/*'],
      request: (p) => ({ method: 'GET', url: `/api/search/${p}?query=TOP` }),
    },
    usage: { routes: ['/api/usage/*'], request: (p) => ({ method: 'GET', url: `/api/usage/${p}` }) },
    'share a path': {
      routes: ['/api/share/*'],
      request: (p) => ({ method: 'POST', url: `/api/share/${p}`, payload: {} }),
    },
    'links of a path': { routes: [], request: (p) => ({ method: 'GET', url: `/api/share/${p}` }) },
    'tus create': {
      routes: ['/api/tus/*'],
      request: (p) => ({
        method: 'POST',
        url: `/api/tus/${p}?override=true`,
        headers: { 'tus-resumable': '1.0.0', 'upload-length': '3' },
      }),
    },
    'tus offset': {
      routes: [],
      request: (p) => ({ method: 'HEAD', url: `/api/tus/${p}`, headers: { 'tus-resumable': '1.0.0' } }),
    },
    'tus append': {
      routes: [],
      request: (p) => ({
        method: 'PATCH',
        url: `/api/tus/${p}`,
        headers: {
          'tus-resumable': '1.0.0',
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
        },
        payload: 'abc',
      }),
    },
    'tus cancel': {
      routes: [],
      request: (p) => ({ method: 'DELETE', url: `/api/tus/${p}`, headers: { 'tus-resumable': '1.0.0' } }),
    },
    // WebDAV over the same escapes, as the URL and as the Destination of COPY and MOVE.
    'webdav PROPFIND': {
      routes: [],
      request: (p) => ({ method: 'PROPFIND', url: `/dav/${p}`, headers: { ...dav, depth: '1' } }),
    },
    'webdav GET': { routes: [], request: (p) => ({ method: 'GET', url: `/dav/${p}`, headers: dav }) },
    'webdav PUT': {
      routes: [],
      request: (p) => ({ method: 'PUT', url: `/dav/${p}`, headers: dav, payload: 'x' }),
    },
    'webdav MKCOL': { routes: [], request: (p) => ({ method: 'MKCOL', url: `/dav/${p}`, headers: dav }) },
    'webdav DELETE': { routes: [], request: (p) => ({ method: 'DELETE', url: `/dav/${p}`, headers: dav }) },
    'webdav PROPPATCH': {
      routes: [],
      request: (p) => ({
        method: 'PROPPATCH',
        url: `/dav/${p}`,
        headers: dav,
        payload:
          '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>',
      }),
    },
    'webdav LOCK': {
      routes: [],
      request: (p) => ({
        method: 'LOCK',
        url: `/dav/${p}`,
        headers: dav,
        payload:
          '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
      }),
    },
    'webdav COPY from': {
      routes: [],
      request: (p) => ({
        method: 'COPY',
        url: `/dav/${p}`,
        headers: { ...dav, destination: '/dav/stolen.txt' },
      }),
    },
    'webdav MOVE from': {
      routes: [],
      request: (p) => ({
        method: 'MOVE',
        url: `/dav/${p}`,
        headers: { ...dav, destination: '/dav/stolen.txt' },
      }),
    },
    'webdav COPY to': {
      routes: [],
      request: (p) => ({
        method: 'COPY',
        url: '/dav/pub/mine.txt',
        headers: { ...dav, destination: `/dav/${p}` },
      }),
    },
    'webdav MOVE to': {
      routes: [],
      request: (p) => ({
        method: 'MOVE',
        url: '/dav/pub/mine.txt',
        headers: { ...dav, destination: `/dav/${p}` },
      }),
    },
    'public listing': {
      routes: ['/api/public/share/*'],
      request: (p) => ({ method: 'GET', url: `/api/public/share/${shareHash}/${p}` }),
    },
    'public download': {
      routes: ['/api/public/dl/*'],
      request: (p) => ({ method: 'GET', url: `/api/public/dl/${shareHash}/${p}?inline=true` }),
    },
    'public archive': {
      routes: [],
      request: (p) => ({ method: 'GET', url: `/api/public/dl/${shareHash}/${p}?algo=tar` }),
    },
  };

  /** WebDAV signs in with Basic auth (the X-Auth token is not read there). */
  const dav = { authorization: 'Basic ' + Buffer.from(`eve:${PASSWORD}`).toString('base64') };

  async function resetHome(): Promise<void> {
    await fs.rm(home, { recursive: true, force: true });
    await fs.mkdir(path.join(home, 'pub'), { recursive: true });
    await fs.writeFile(path.join(home, 'pub/mine.txt'), 'mine');
    await fs.symlink(path.join(t.outside, 'TOPSECRET.txt'), path.join(home, 'out-file'));
    await fs.symlink(t.outside, path.join(home, 'out-dir'));
    await fs.symlink(path.join(t.outside, 'created-through-link'), path.join(home, 'dangle'));
    await fs.symlink('../bob', path.join(home, 'to-bob'));
    // The public share is of eve's "pub" folder, whose parent holds the links: a share path that
    // climbs out of "pub" meets them.
    await fs.symlink('../out-dir', path.join(home, 'pub', 'up-out'));
  }

  beforeAll(async () => {
    t = await startFilesApp();
    eve = await t.user('eve', { perm: { ...ALL, admin: false } });
    await t.user('bob');
    home = path.join(t.root, 'eve');
    await fs.writeFile(path.join(t.outside, 'TOPSECRET.txt'), MARK);
    await fs.writeFile(path.join(t.root, 'bob', 'TOPSECRET.txt'), MARK);
    await resetHome();
    const res = await t.req(eve, { method: 'POST', url: '/api/share/pub', payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    shareHash = (res.json() as { hash: string }).hash;
    before = { outside: await inventory(t.outside), bob: await inventory(path.join(t.root, 'bob')) };
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('lists every route that takes a path', () => {
    const listed = new Set([
      ...Object.values(ENDPOINTS).flatMap((e) => e.routes),
      // The working folder and arguments of the command runner: command-websocket.test.ts
      // ("refuses a working folder that is missing, outside or hidden by rules"), runner-arguments
      // and security-runner.test.ts.
      '/api/command/*',
    ]);
    const routes = t.routes.urls().filter((url) => url.includes('*') && url.startsWith('/api/'));
    expect(routes.length).toBeGreaterThan(8);
    expect(routes.filter((r) => !listed.has(r))).toEqual([]);
  });

  for (const [endpoint, { request }] of Object.entries(ENDPOINTS)) {
    it(`${endpoint}: no outside byte out, no outside file in`, async () => {
      for (const [escape, p] of Object.entries(ESCAPES)) {
        await resetHome();
        for (const upload of t.ctx.store.uploads.all()) t.ctx.store.uploads.delete(upload.id);
        const opts = request(p);
        const isPublic = opts.url!.toString().startsWith('/api/public/');
        const res = await send(port, isPublic ? undefined : eve, opts);
        const label = `${endpoint} via ${escape}: ${res.statusCode} ${res.body.slice(0, 160)}`;
        expect(res.statusCode, label).toBeLessThan(500);
        expect(res.rawPayload.includes(Buffer.from(MARK)), label).toBe(false);
        expect(await inventory(t.outside), label).toEqual(before.outside);
        expect(await inventory(path.join(t.root, 'bob')), label).toEqual(before.bob);
      }
    });
  }
});

/** An administrator changes a user's scope through the API, as in the web app's user form. */
function setScope(t: FilesApp, admin: string, username: string, scope: string) {
  const user = t.ctx.store.users.getByUsername(username)!;
  return t.req(admin, {
    method: 'PUT',
    url: `/api/users/${user.id}`,
    payload: {
      what: 'user',
      which: ['scope'],
      current_password: PASSWORD,
      data: { ...user, scope, password: '' },
    },
  });
}

describe('shares', () => {
  let t: FilesApp;
  afterEach(() => t.close());

  it('case 1: a public link to / never lists or serves the database inside the root', async () => {
    t = await startFilesApp(
      (base) => ({ cacheDir: '', database: path.join(base, 'root', 'filebrowser.db') }),
      {},
    );
    const admin = await t.user('whole', { scope: '/' });
    await fs.writeFile(path.join(t.root, 'ok.txt'), 'ok');
    const res = await t.req(admin, { method: 'POST', url: '/api/share/', payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const hash = (res.json() as { hash: string }).hash;
    const listing = await t.app.inject({ method: 'GET', url: `/api/public/share/${hash}` });
    expect(listing.statusCode).toBe(200);
    expect(listing.body).toContain('ok.txt');
    expect(listing.body).not.toMatch(/filebrowser\.db|filebrowser-uploads/);
    for (const name of [
      'filebrowser.db',
      'filebrowser.db-wal',
      'filebrowser.db-shm',
      'filebrowser.db-journal',
    ]) {
      const dl = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/${name}` });
      expect([403, 404], `${name}: ${dl.statusCode}`).toContain(dl.statusCode);
      expect(dl.rawPayload.includes(Buffer.from('SQLite format 3'))).toBe(false);
    }
    const archive = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}?algo=tar` });
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('ok.txt'))).toBe(true);
    expect(archive.rawPayload.includes(Buffer.from('filebrowser.db'))).toBe(false);
    expect(archive.rawPayload.includes(Buffer.from('SQLite format 3'))).toBe(false);
  });

  it('case 6: after the owner’s scope changes, the old link answers 404 instead of another folder', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    await fs.mkdir(path.join(t.root, 'bob/docs'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'bob/docs/a.txt'), 'what was shared');
    await fs.mkdir(path.join(t.root, 'elsewhere/docs'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'elsewhere/docs/a.txt'), 'NOT SHARED');
    const made = await t.req(bob, { method: 'POST', url: '/api/share/docs/a.txt', payload: {} });
    const hash = (made.json() as { hash: string }).hash;
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).body).toBe(
      'what was shared',
    );

    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    const res = await setScope(t, admin, 'bob', '/elsewhere');
    expect(res.statusCode, res.body).toBe(200);
    const after = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` });
    expect(after.statusCode).toBe(404);
    expect(after.body).not.toContain('NOT SHARED');
    const info = await t.app.inject({ method: 'GET', url: `/api/public/share/${hash}` });
    expect(info.statusCode).toBe(404);

    // Given the old scope back, the link serves what was shared again: it points at the item.
    const back = await setScope(t, admin, 'bob', '/bob');
    expect(back.statusCode, back.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).body).toBe(
      'what was shared',
    );
  });

  it('case 7: without download, a copy into a publicly shared folder is refused and nothing leaks', async () => {
    t = await startFilesApp();
    const noDownload: Permissions = { ...ALL, admin: false, download: false, share: false };
    const mallory = await t.user('mallory', { scope: '/team', perm: noDownload });
    const alice = await t.user('alice', { scope: '/team' });
    await fs.mkdir(path.join(t.root, 'team/public'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'team/report.txt'), 'CONFIDENTIAL');
    const made = await t.req(alice, { method: 'POST', url: '/api/share/public', payload: {} });
    const hash = (made.json() as { hash: string }).hash;

    const copy = await t.req(mallory, {
      method: 'PATCH',
      url: '/api/resources/report.txt?action=copy&destination=%2Fpublic%2Freport.txt',
    });
    expect(copy.statusCode).toBe(403);
    expect(copy.body).toMatch(/download permission/);
    await expect(fs.access(path.join(t.root, 'team/public/report.txt'))).rejects.toThrow();
    const dl = await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/report.txt` });
    expect(dl.statusCode).toBe(404);
    expect(dl.body).not.toContain('CONFIDENTIAL');
  });
});

describe('case 2: merging a folder into one whose sub-folder is a link to the outside', () => {
  let t: FilesApp;
  let token: string;
  beforeEach(async () => {
    t = await startFilesApp();
    token = await t.user('eve', { perm: { ...ALL, admin: false } });
    const home = path.join(t.root, 'eve');
    await fs.mkdir(path.join(home, 'src/sub'), { recursive: true });
    await fs.writeFile(path.join(home, 'src/sub/new.txt'), 'planted');
    await fs.writeFile(path.join(home, 'src/sub/victim.txt'), 'overwritten');
    await fs.mkdir(path.join(home, 'dst'));
    await fs.writeFile(path.join(t.outside, 'victim.txt'), 'original');
    await fs.symlink(t.outside, path.join(home, 'dst/sub'));
  });
  afterEach(() => t.close());

  for (const action of ['copy', 'rename']) {
    for (const flag of ['override', 'rename']) {
      it(`${action} with ${flag}=true creates and overwrites nothing outside`, async () => {
        const before = await inventory(t.outside);
        const res = await t.req(token, {
          method: 'PATCH',
          url: `/api/resources/src?action=${action}&destination=%2Fdst&${flag}=true`,
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect(await inventory(t.outside)).toEqual(before);
        expect(await fs.readFile(path.join(t.outside, 'victim.txt'), 'utf8')).toBe('original');
        // The link itself is never replaced by a merge either.
        expect((await fs.lstat(path.join(t.root, 'eve/dst/sub'))).isSymbolicLink()).toBe(
          res.statusCode >= 400 || flag === 'rename',
        );
      });
    }
  }
});

describe('folders the server makes for users', () => {
  let t: FilesApp;
  beforeEach(async () => {
    t = await startFilesApp();
  });
  afterEach(() => t.close());

  it('never makes a home folder through a link planted on the way', async () => {
    await fs.symlink(t.outside, path.join(t.root, 'users'));
    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    const before = await inventory(t.outside);
    t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      createUserDir: true,
      userHomeBasePath: '/users',
    });
    const res = await t.req(admin, {
      method: 'POST',
      url: '/api/users',
      payload: {
        what: 'user',
        which: [],
        current_password: PASSWORD,
        data: {
          username: 'newbie',
          password: 'a-long-enough-password',
          scope: '',
          perm: { ...ALL, admin: false },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(403);
    expect(await inventory(t.outside)).toEqual(before);
    expect(t.ctx.store.users.getByUsername('newbie')).toBeUndefined();
  });

  it('refuses a scope whose folder would be made through a link', async () => {
    await fs.mkdir(path.join(t.root, 'teams'));
    await fs.symlink(t.outside, path.join(t.root, 'teams', 'out'));
    const admin = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    await t.user('carol');
    const res = await setScope(t, admin, 'carol', '/teams/out/new');
    expect(res.statusCode, res.body).toBe(403);
    await expect(fs.access(path.join(t.outside, 'new'))).rejects.toThrow();
    expect(t.ctx.store.users.getByUsername('carol')!.scope).toBe('/carol');
  });
});

describe('permission matrix of the public endpoints', () => {
  let t: FilesApp;
  beforeAll(async () => {
    t = await startFilesApp();
  });
  afterAll(() => t.close());

  const PERMS = ['admin', 'execute', 'create', 'rename', 'modify', 'delete', 'share', 'download'] as const;

  it.each(PERMS)('the owner without %s', async (off) => {
    const name = `owner-${off}`;
    const token = await t.user(name, { perm: { ...ALL, admin: false } });
    await fs.mkdir(path.join(t.root, name, 'pub'), { recursive: true });
    await fs.writeFile(path.join(t.root, name, 'pub/a.txt'), 'shared bytes');
    const made = await t.req(token, { method: 'POST', url: '/api/share/pub', payload: {} });
    expect(made.statusCode, made.body).toBe(200);
    const hash = (made.json() as { hash: string }).hash;

    const owner = t.ctx.store.users.getByUsername(name)!;
    owner.perm = { ...owner.perm, [off]: false };
    t.ctx.store.users.update(owner);

    // A link hands files to someone else: it lives while its owner may share and download.
    const serves = off !== 'share' && off !== 'download';
    const calls = {
      listing: `/api/public/share/${hash}`,
      file: `/api/public/dl/${hash}/a.txt`,
      archive: `/api/public/dl/${hash}?algo=tar`,
    };
    for (const [what, url] of Object.entries(calls)) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, `${what} without ${off}: ${res.body.slice(0, 120)}`).toBe(serves ? 200 : 403);
      expect(res.rawPayload.includes(Buffer.from('shared bytes')), what).toBe(serves && what !== 'listing');
    }
  });
});

describe('the audit log', () => {
  let t: FilesApp;
  let admin: string;
  beforeAll(async () => {
    t = await startFilesApp();
    admin = await t.user('boss', { perm: { ...ALL, admin: true } });
  });
  afterAll(() => t.close());

  const token = async (readOnly: boolean) => {
    const res = await t.req(admin, {
      method: 'POST',
      url: '/api/tokens',
      payload: {
        name: readOnly ? 'reader' : 'writer',
        expiresInDays: 0,
        readOnly,
        current_password: PASSWORD,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { secret: string }).secret;
  };
  const urls = ['/api/audit', '/api/audit/export?format=csv', '/api/audit/export?format=json'];

  it('is closed to users without the admin permission, and to none signed in', async () => {
    const user = await t.user('plain', { perm: ALL });
    for (const url of urls) {
      expect((await t.get(user, url)).statusCode, url).toBe(403);
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
  });

  it('is closed to an administrator’s read-only API token, open to a read-write one', async () => {
    const reader = await token(true);
    const writer = await token(false);
    for (const url of urls) {
      const bearer = (secret: string) => ({
        method: 'GET' as const,
        url,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect((await t.app.inject(bearer(reader))).statusCode, url).toBe(403);
      expect((await t.app.inject(bearer(writer))).statusCode, url).toBe(200);
    }
  });

  it('never records a password or a token secret', async () => {
    const secret = await token(false);
    await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'boss', password: 'a-wrong-guess-123' },
    });
    const all = await t.get(admin, '/api/audit/export?format=json');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('auth.login');
    for (const word of [PASSWORD, 'a-wrong-guess-123', secret, secret.slice(-43)])
      expect(all.body).not.toContain(word);
  });
});
