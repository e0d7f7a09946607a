import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';
import { MARK, inventory, send } from './security-catalogue-helpers.js';

/**
 * The attack catalogue, one named test per class that the other security files do not already
 * own (docs/security.md maps every class to its tests): path escapes through every endpoint that
 * takes a path. The share cases, folders the server makes for users, the permission matrix of
 * the public endpoints and the audit log are in security-catalogue-shares.test.ts.
 */

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
      // The working folder and arguments of the command runner: command-websocket-process.test.ts
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
        for (const upload of await t.ctx.store.uploads.all()) await t.ctx.store.uploads.delete(upload.id);
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
