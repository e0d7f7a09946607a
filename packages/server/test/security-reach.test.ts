import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Permissions } from '@filebrowser/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { CALLERS, READING_METHODS, type Caller, type Reach, type RouteReach } from '../src/auth/policy.js';
import { defaultConfig } from '../src/config/defaults.js';
import { FILE_CHANGES, OPEN } from '../src/http/reach.js';
import { openStore } from '../src/store/index.js';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';
import { TEST_BCRYPT_COST } from './helpers.js';

/*
 * Class: a kind of caller reaching through some route what its credential should not reach (a
 * folder token listing and purging the whole trash, a read-only token taking locks). Every route
 * declares what each kind of caller reaches (http/reach.ts); this walks every registered route,
 * WebDAV and the command WebSocket included, with a caller of each kind, and checks the answer and
 * the state of the world against the declaration: refused callers change nothing, a folder token
 * changes and reads nothing outside its folder, open routes answer everyone alike.
 */

/** In every name and content outside the folder token's folder, and nowhere inside it. */
const MARK = 'k9c1e';
/** In the content of every file outside the folder token's folder. */
const CONTENT = 'zq7-outside-content';
const ALL_PERMS: Permissions = {
  admin: true,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};
const SHARE_PASSWORD = 'share-password-for-the-walk';
const TUS = { 'tus-resumable': '1.0.0' };
const LOCKINFO =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>walk</D:owner></D:lockinfo>';
const PROPPATCH =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:c>v</Z:c></D:prop></D:set></D:propertyupdate>';

interface Req {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

interface Answer {
  status: number;
  body: string;
}

/** What the walk knows of the world it built (ids change with each rebuild). */
interface World {
  ownerId: number;
  spareUserId: number;
  spareTokenId: string;
  shareHash: string;
  shareToken: string;
  trashInside: string;
  trashOutside: string;
  jobInside: string;
  jobOutside: string;
}

/** How a caller names a path of the owner's scope: a folder token sees `/docs` as `/`. */
type View = (scopePath: string) => string;

interface Sample {
  /** A request an allowed caller makes, naming what lies inside the folder token's folder. */
  inside: (w: World, v: View) => Req;
  /** The same route aimed at what lies outside that folder (as a whole-scope caller names it). */
  outside?: (w: World) => Req;
  /** The statuses an allowed caller's `inside` request may get (default: below 400). */
  ok?: number[];
  /** Runs after a request an allowed caller made (to wait for work it started). */
  after?: (answer: Answer) => Promise<void>;
  /** Its answer repeats the names the request gave (WebDAV's hrefs): only contents tell a leak. */
  echoes?: boolean;
}

let t: FilesApp;
let port: number;
let world: World;
const owner = 'walker';
const home = () => path.join(t.root, owner);
let session: string;
const secrets: Record<'token' | 'readOnlyToken' | 'folderToken', string> = {
  token: '',
  readOnlyToken: '',
  folderToken: '',
};
const TOKEN_NAMES = { token: 'walk-full', readOnlyToken: 'walk-ro', folderToken: 'walk-folder' } as const;

/** One request over a real connection. */
function send(req: Req): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers: {
          ...(req.body !== undefined && { 'content-length': String(Buffer.byteLength(req.body)) }),
          ...req.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** A request as the session of the owner (the world is built with these). */
function asSession(req: Req): Promise<Answer> {
  return send({ ...req, headers: { 'x-auth': session, ...req.headers } });
}

const json = (payload: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(payload),
});

/** The credential a caller of `kind` sends, by how the route takes them. */
function credentials(kind: Caller, dav: boolean): Record<string, string> {
  const basic = (user: string, secret: string) => ({
    authorization: 'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64'),
  });
  switch (kind) {
    case 'session':
      return dav ? basic(owner, PASSWORD) : { 'x-auth': session };
    case 'token':
    case 'readOnlyToken':
    case 'folderToken':
      return dav ? basic(owner, secrets[kind]) : { authorization: `Bearer ${secrets[kind]}` };
    case 'shareVisitor':
      // All a share visitor holds: the link, its password and the token the password earned.
      return dav ? basic(world.shareHash, SHARE_PASSWORD) : { 'x-share-password': SHARE_PASSWORD };
    case 'anonymous':
      return {};
  }
}

const scopeView: View = (p) => p;
const folderView: View = (p) => {
  if (p === '/docs' || p === '/docs/') return '/';
  if (!p.startsWith('/docs/')) throw new Error(`${p} is not inside the folder`);
  return p.slice('/docs'.length);
};
const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');

// ---------------------------------------------------------------------------------------------
// The world: the owner's scope with the folder token's folder /docs, and things outside it of
// every kind a route keeps (files, trash items, pending uploads, jobs, a share, locks).

async function login(): Promise<string> {
  const res = await send({
    method: 'POST',
    url: '/api/login',
    ...json({ username: owner, password: PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.body}`);
  return res.body;
}

async function ok(answer: Promise<Answer>, what: string, statuses = [200, 201, 202, 204]): Promise<Answer> {
  const res = await answer;
  if (!statuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${res.body}`);
  return res;
}

async function makeToken(
  name: string,
  wish: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  const res = await ok(
    asSession({
      method: 'POST',
      url: '/api/tokens',
      ...json({ name, expiresInDays: 0, readOnly: false, ...wish, current_password: PASSWORD }),
    }),
    `token ${name}`,
  );
  return JSON.parse(res.body) as { id: string; secret: string };
}

/**
 * Builds the world, or builds again what requests changed: files, trash items and uploads every
 * time; the share, the spare user and token, and the jobs only when they are gone.
 */
async function buildWorld(): Promise<void> {
  const { ctx } = t;
  if (!(await ctx.auth.verify(session).catch(() => undefined))) session = await login();
  const ownerId = ctx.store.users.getByUsername(owner)!.id;
  // What earlier requests left: uploads, trash, locks, props, users, tokens, settings.
  for (const u of ctx.store.uploads.all()) {
    ctx.store.uploads.delete(u.id);
    await fs.rm(u.staging, { force: true });
  }
  await ok(asSession({ method: 'DELETE', url: '/api/trash' }), 'empty the trash');
  ctx.store.davLocks.removeWithin('default', '/');
  ctx.store.davProps.remove('default', '/');
  for (const u of ctx.store.users.list()) {
    if (!['admin', owner, 'spare'].includes(u.username)) ctx.store.users.delete(u.id);
  }
  const keep = new Set([...Object.values(tokenIds), world?.spareTokenId]);
  for (const tok of ctx.store.apiTokens.listByUser(ownerId)) {
    if (!keep.has(tok.id)) ctx.store.apiTokens.delete(tok.id);
  }
  for (const s of ctx.store.shares.list(ownerId)) {
    if (s.hash !== world?.shareHash) ctx.store.shares.delete(s.hash);
  }
  ctx.store.settings.save(baselineSettings);

  await fs.rm(home(), { recursive: true, force: true });
  await fs.mkdir(path.join(home(), 'docs', 'sub'), { recursive: true });
  await fs.mkdir(path.join(home(), `${MARK}-dir`), { recursive: true });
  await fs.writeFile(path.join(home(), 'docs', 'inside.txt'), 'inside');
  await fs.writeFile(path.join(home(), 'docs', 'sub', 'deep.txt'), 'deep');
  await fs.writeFile(path.join(home(), 'docs', 'subs.srt'), '1\n00:00:01,000 --> 00:00:02,000\nhello\n');
  await fs.writeFile(path.join(home(), 'docs', 'pic.png'), picture);
  await fs.writeFile(path.join(home(), 'docs', 'trashed-inside.txt'), 'gone inside');
  await fs.writeFile(path.join(home(), `secret-${MARK}.txt`), `secret ${CONTENT}`);
  await fs.writeFile(path.join(home(), `${MARK}-dir`, 'deeper.txt'), `deeper ${CONTENT}`);
  await fs.writeFile(path.join(home(), `trashed-${MARK}.txt`), `gone ${CONTENT}`);

  for (const p of ['/docs/trashed-inside.txt', `/trashed-${MARK}.txt`]) {
    await ok(asSession({ method: 'DELETE', url: `/api/resources${enc(p)}` }), `trash ${p}`);
  }
  const items = ctx.store.trash.list(ownerId);
  const trashInside = items.find((i) => i.path === '/docs/trashed-inside.txt')!.id;
  const trashOutside = items.find((i) => i.path === `/trashed-${MARK}.txt`)!.id;

  // Pending uploads: one inside, one outside whose path the folder token could spell too.
  for (const p of ['/docs/pending-inside.txt', `/${MARK}-up.txt`]) {
    await ok(
      asSession({ method: 'POST', url: `/api/tus${enc(p)}`, headers: { ...TUS, 'upload-length': '5' } }),
      `upload ${p}`,
    );
  }
  await ok(
    asSession({
      method: 'PATCH',
      url: `/api/tus/${MARK}-up.txt`,
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'ab',
    }),
    'upload bytes',
  );

  let { shareHash, shareToken } = world ?? { shareHash: '', shareToken: '' };
  if (!ctx.store.shares.get(shareHash)) {
    const share = await ok(
      asSession({ method: 'POST', url: '/api/share/docs', ...json({ password: SHARE_PASSWORD }) }),
      'share',
    );
    shareHash = (JSON.parse(share.body) as { hash: string }).hash;
    const info = await ok(
      send({
        method: 'GET',
        url: `/api/public/share/${shareHash}`,
        headers: { 'x-share-password': SHARE_PASSWORD },
      }),
      'share token',
    );
    shareToken = (JSON.parse(info.body) as { token: string }).token;
  }

  if (!ctx.store.users.getByUsername('spare')) {
    await ok(
      asSession({
        method: 'POST',
        url: '/api/users',
        ...json({
          what: 'user',
          which: [],
          current_password: PASSWORD,
          data: {
            username: 'spare',
            password: 'a-password-for-the-spare-user',
            scope: '/spare',
            perm: ALL_PERMS,
          },
        }),
      }),
      'spare user',
      [201],
    );
  }
  const spareUserId = ctx.store.users.getByUsername('spare')!.id;
  let spareTokenId = world?.spareTokenId ?? '';
  if (!ctx.store.apiTokens.get(spareTokenId)) spareTokenId = (await makeToken('spare', {})).id;

  // A job started from outside the folder (the session's), and one inside it (the token's).
  const known = (id: string | undefined) => id !== undefined && t.ctx.jobs.get({ id: ownerId }, id);
  const jobOutside = known(world?.jobOutside)
    ? world.jobOutside
    : await startJob({ 'x-auth': session }, [`/secret-${MARK}.txt`], `/${MARK}-dir/`);
  const jobInside = known(world?.jobInside)
    ? world.jobInside
    : await startJob({ authorization: `Bearer ${secrets.folderToken}` }, ['/inside.txt'], '/sub/');

  world = {
    ownerId,
    spareUserId,
    spareTokenId,
    shareHash,
    shareToken,
    trashInside,
    trashOutside,
    jobInside,
    jobOutside,
  };
  baseline = await inventory();
}

async function startJob(
  headers: Record<string, string>,
  items: string[],
  destination: string,
): Promise<string> {
  const res = await ok(
    send({
      method: 'POST',
      url: '/api/jobs',
      ...json({ action: 'copy', items, destination, rename: true }),
      headers: { ...json({}).headers, ...headers },
    }),
    'job',
  );
  const { id } = JSON.parse(res.body) as { id: string };
  await jobEnded(id);
  return id;
}

/** Jobs that have ended, as the registry told (its `finished` event). */
const endedJobs = new Set<string>();

/** Waits for a job to end: the registry says when (no clock). */
function jobEnded(id: string): Promise<void> {
  if (endedJobs.has(id)) return Promise.resolve();
  return new Promise((resolve) => {
    const heard = (job: { id: string }) => {
      if (job.id !== id) return;
      t.ctx.jobs.off('finished', heard);
      resolve();
    };
    t.ctx.jobs.on('finished', heard);
  });
}

let picture: Buffer;
let baselineSettings: ReturnType<FilesApp['ctx']['store']['settings']['get']>;
const tokenIds: Record<string, string> = {};

// ---------------------------------------------------------------------------------------------
// What the world holds, split into what lies inside the folder token's folder and the rest.

interface Inventory {
  inside: string[];
  outside: string[];
}

let baseline: Inventory;

async function files(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    const name = `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(`dir ${name}`, ...(await files(full, name)));
    else {
      const data = await fs.readFile(full);
      out.push(`file ${name} ${crypto.createHash('sha256').update(data).digest('hex').slice(0, 12)}`);
    }
  }
  return out;
}

async function inventory(): Promise<Inventory> {
  const { store } = t.ctx;
  const ownerId = store.users.getByUsername(owner)?.id ?? -1;
  const inside: string[] = [];
  const outside: string[] = [];
  const place = (isInside: boolean, what: string) => (isInside ? inside : outside).push(what);
  for (const f of await files(t.root))
    place(f.includes(`/${owner}/docs/`) || f.endsWith(`/${owner}/docs`), f);
  const inFolder = (rootPath: string) =>
    rootPath === `/${owner}/docs` || rootPath.startsWith(`/${owner}/docs/`);
  for (const i of store.trash.list(ownerId)) place(inFolder(i.rootPath), `trash ${i.id}`);
  for (const u of store.uploads.all()) {
    const size = await fs.stat(u.staging).then(
      (s) => s.size,
      () => -1,
    );
    place(u.path.startsWith('/docs/'), `upload ${u.path} ${u.id} ${size}`);
  }
  for (const l of store.davLocks.related('default', '/')) place(inFolder(l.path), `lock ${l.path}`);
  for (const [p, props] of store.davProps.listWithin('default', '/', true)) {
    place(inFolder(p), `props ${p} ${props.length}`);
  }
  // What no folder token may change at all.
  outside.push(...store.shares.list().map((s) => `share ${s.hash} ${s.rootPath}`));
  outside.push(...store.users.list().map((u) => `user ${u.id} ${u.username} ${u.updatedAt}`));
  outside.push(...store.apiTokens.listByUser(ownerId).map((k) => `token ${k.id}`));
  outside.push(`settings ${JSON.stringify(store.settings.get())}`);
  const job = (id: string) => t.ctx.jobs.get({ id: ownerId }, id)?.job;
  if (world) outside.push(`job ${JSON.stringify(job(world.jobOutside))}`);
  return { inside: inside.sort(), outside: outside.sort() };
}

// ---------------------------------------------------------------------------------------------
// A request of every route: its inside request (what an allowed caller does) and, for routes a
// folder token reaches in its folder, one aimed outside it. Keyed by `METHOD url` as registered.

const rawUrl = (url: string) =>
  url.replace('/:id(^\\d+$)', '/1').replace(':size', 'thumb').replace(':id', 'x').replace('*', 'x');

const davSample = (method: string, root: boolean): Sample => {
  const url = (v: View, p: string) => (root ? '/dav' : `/dav${enc(v(p))}`);
  const any = [200, 201, 204, 207, 400, 403, 404, 405, 409, 412, 415, 423];
  return { ...davRequests(method, url, root, any), echoes: true };
};

const davRequests = (
  method: string,
  url: (v: View, p: string) => string,
  root: boolean,
  any: number[],
): Sample => {
  switch (method) {
    case 'OPTIONS':
      return { inside: (_w, v) => ({ method, url: url(v, '/docs/') }) };
    case 'GET':
    case 'HEAD':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt') }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt` }),
        ...(root && { ok: any }),
      };
    case 'PROPFIND':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/'), headers: { depth: '1' } }),
        outside: () => ({ method, url: `/dav/${MARK}-dir/`, headers: { depth: '1' } }),
      };
    case 'PUT':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/dav-new.txt'), body: 'dav' }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: 'overwritten' }),
        ...(root && { ok: any }),
      };
    case 'DELETE':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt') }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt` }),
        ...(root && { ok: any }),
      };
    case 'PROPPATCH':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt'), body: PROPPATCH }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: PROPPATCH }),
        ...(root && { ok: any }),
      };
    case 'MKCOL':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/made/') }),
        outside: () => ({ method, url: `/dav/${MARK}-dir/made/` }),
        ok: root ? any : [201],
      };
    case 'COPY':
    case 'MOVE':
      return {
        inside: (_w, v) => ({
          method,
          url: url(v, '/docs/inside.txt'),
          headers: { destination: `/dav${enc(v('/docs/moved.txt'))}` },
        }),
        outside: () => ({
          method,
          url: `/dav/secret-${MARK}.txt`,
          headers: { destination: `/dav/taken-${MARK}.txt` },
        }),
        ...(root && { ok: any }),
      };
    case 'LOCK':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt'), body: LOCKINFO }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: LOCKINFO }),
        ...(root && { ok: any }),
      };
    case 'UNLOCK':
      // No lock is held: what matters is that the guard let the caller this far.
      return {
        inside: (_w, v) => ({
          method,
          url: url(v, '/docs/inside.txt'),
          headers: { 'lock-token': '<urn:uuid:x>' },
        }),
        outside: () => ({
          method,
          url: `/dav/secret-${MARK}.txt`,
          headers: { 'lock-token': '<urn:uuid:x>' },
        }),
        ok: [204, 400, 409],
      };
  }
  throw new Error(`no WebDAV sample for ${method}`);
};

const SAMPLES: Record<string, Sample> = {
  'GET /api/users': { inside: () => ({ method: 'GET', url: '/api/users' }) },
  'HEAD /api/users': { inside: () => ({ method: 'HEAD', url: '/api/users' }) },
  'POST /api/users': {
    inside: () => ({
      method: 'POST',
      url: '/api/users',
      ...json({
        what: 'user',
        which: [],
        current_password: PASSWORD,
        data: { username: 'made-by-walk', password: 'a-password-made-by-the-walk', scope: '/made' },
      }),
    }),
  },
  'GET /api/users/:id(^\\d+$)': { inside: (w) => ({ method: 'GET', url: `/api/users/${w.ownerId}` }) },
  'HEAD /api/users/:id(^\\d+$)': { inside: (w) => ({ method: 'HEAD', url: `/api/users/${w.ownerId}` }) },
  'PUT /api/users/:id(^\\d+$)': {
    inside: (w) => ({
      method: 'PUT',
      url: `/api/users/${w.spareUserId}`,
      ...json({ what: 'user', which: ['locale'], data: { id: w.spareUserId, locale: 'fr' } }),
    }),
  },
  'DELETE /api/users/:id(^\\d+$)': {
    inside: (w) => ({
      method: 'DELETE',
      url: `/api/users/${w.spareUserId}`,
      ...json({ current_password: PASSWORD }),
    }),
  },
  'POST /api/logout': { inside: () => ({ method: 'POST', url: '/api/logout' }) },
  'GET /api/tokens': { inside: () => ({ method: 'GET', url: '/api/tokens' }) },
  'HEAD /api/tokens': { inside: () => ({ method: 'HEAD', url: '/api/tokens' }) },
  'POST /api/tokens': {
    inside: () => ({
      method: 'POST',
      url: '/api/tokens',
      ...json({ name: 'made', expiresInDays: 0, readOnly: false, current_password: PASSWORD }),
    }),
  },
  'DELETE /api/tokens/:id': { inside: (w) => ({ method: 'DELETE', url: `/api/tokens/${w.spareTokenId}` }) },
  'GET /api/users/:id(^\\d+$)/tokens': {
    inside: (w) => ({ method: 'GET', url: `/api/users/${w.ownerId}/tokens` }),
  },
  'HEAD /api/users/:id(^\\d+$)/tokens': {
    inside: (w) => ({ method: 'HEAD', url: `/api/users/${w.ownerId}/tokens` }),
  },
  'GET /api/settings': { inside: () => ({ method: 'GET', url: '/api/settings' }) },
  'HEAD /api/settings': { inside: () => ({ method: 'HEAD', url: '/api/settings' }) },
  'PUT /api/settings': {
    inside: () => ({ method: 'PUT', url: '/api/settings', ...json({ signup: false }) }),
  },

  'GET /api/resources/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/resources${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'HEAD /api/resources/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/resources${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'GET /api/resources/recursive/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/resources/recursive${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/resources/recursive/${MARK}-dir/` }),
  },
  'HEAD /api/resources/recursive/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/resources/recursive${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/resources/recursive/${MARK}-dir/` }),
  },
  'POST /api/resources/*': {
    inside: (_w, v) => ({ method: 'POST', url: `/api/resources${v('/docs/new.txt')}`, body: 'new' }),
    outside: () => ({
      method: 'POST',
      url: `/api/resources/secret-${MARK}.txt?override=true`,
      body: 'overwritten',
    }),
  },
  'PUT /api/resources/*': {
    inside: (_w, v) => ({ method: 'PUT', url: `/api/resources${v('/docs/inside.txt')}`, body: 'changed' }),
    outside: () => ({ method: 'PUT', url: `/api/resources/secret-${MARK}.txt`, body: 'overwritten' }),
  },
  'DELETE /api/resources/*': {
    inside: (_w, v) => ({ method: 'DELETE', url: `/api/resources${v('/docs/inside.txt')}` }),
    outside: () => ({ method: 'DELETE', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'PATCH /api/resources/*': {
    inside: (_w, v) => ({
      method: 'PATCH',
      url: `/api/resources${v('/docs/inside.txt')}?action=copy&destination=${encodeURIComponent(v('/docs/copy.txt'))}`,
    }),
    outside: () => ({
      method: 'PATCH',
      url: `/api/resources/secret-${MARK}.txt?action=rename&destination=${encodeURIComponent('/moved.txt')}`,
    }),
  },
  'GET /api/raw/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/raw${v('/docs/inside.txt')}` }),
    outside: () => ({ method: 'GET', url: `/api/raw/secret-${MARK}.txt` }),
  },
  'GET /api/preview/:size/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/preview/thumb${v('/docs/pic.png')}` }),
    outside: () => ({ method: 'GET', url: `/api/preview/thumb/secret-${MARK}.txt` }),
  },
  'HEAD /api/preview/:size/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/preview/thumb${v('/docs/pic.png')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/preview/thumb/secret-${MARK}.txt` }),
  },
  'GET /api/subtitle/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/subtitle${v('/docs/subs.srt')}` }),
    outside: () => ({ method: 'GET', url: `/api/subtitle/secret-${MARK}.txt` }),
  },
  'HEAD /api/subtitle/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/subtitle${v('/docs/subs.srt')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/subtitle/secret-${MARK}.txt` }),
  },
  'GET /api/search/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/search${v('/docs/')}?query=inside` }),
    outside: () => ({ method: 'GET', url: `/api/search/?query=${MARK}` }),
  },
  'HEAD /api/search/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/search${v('/docs/')}?query=inside` }),
    outside: () => ({ method: 'HEAD', url: `/api/search/?query=${MARK}` }),
  },
  'GET /api/usage/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/usage${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/usage/${MARK}-dir/` }),
  },
  'HEAD /api/usage/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/usage${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/usage/${MARK}-dir/` }),
  },

  'GET /api/shares': { inside: () => ({ method: 'GET', url: '/api/shares' }) },
  'HEAD /api/shares': { inside: () => ({ method: 'HEAD', url: '/api/shares' }) },
  'GET /api/share/*': { inside: () => ({ method: 'GET', url: '/api/share/docs' }) },
  'HEAD /api/share/*': { inside: () => ({ method: 'HEAD', url: '/api/share/docs' }) },
  'POST /api/share/*': { inside: () => ({ method: 'POST', url: '/api/share/docs/inside.txt', ...json({}) }) },
  'DELETE /api/share/*': { inside: (w) => ({ method: 'DELETE', url: `/api/share/${w.shareHash}` }) },
  'GET /api/public/share/*': {
    inside: (w) => ({ method: 'GET', url: `/api/public/share/${w.shareHash}/?token=${w.shareToken}` }),
    outside: (w) => ({
      method: 'GET',
      url: `/api/public/share/${w.shareHash}/secret-${MARK}.txt?token=${w.shareToken}`,
    }),
  },
  'GET /api/public/dl/*': {
    inside: (w) => ({ method: 'GET', url: `/api/public/dl/${w.shareHash}/inside.txt?token=${w.shareToken}` }),
    outside: (w) => ({
      method: 'GET',
      url: `/api/public/dl/${w.shareHash}/secret-${MARK}.txt?token=${w.shareToken}`,
    }),
  },

  'POST /api/tus': {
    inside: () => ({ method: 'POST', url: '/api/tus', headers: { ...TUS, 'upload-length': '1' } }),
    ok: [400, 403],
  },
  'HEAD /api/tus': { inside: () => ({ method: 'HEAD', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'GET /api/tus': { inside: () => ({ method: 'GET', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'PATCH /api/tus': {
    inside: () => ({
      method: 'PATCH',
      url: '/api/tus',
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'a',
    }),
    ok: [403, 404],
  },
  'DELETE /api/tus': { inside: () => ({ method: 'DELETE', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'POST /api/tus/*': {
    inside: (_w, v) => ({
      method: 'POST',
      url: `/api/tus${v('/docs/tus-new.txt')}`,
      headers: { ...TUS, 'upload-length': '3' },
    }),
    outside: () => ({
      method: 'POST',
      url: `/api/tus/${MARK}-up.txt`,
      headers: { ...TUS, 'upload-length': '3' },
    }),
  },
  'HEAD /api/tus/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'HEAD', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },
  'GET /api/tus/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'GET', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },
  'PATCH /api/tus/*': {
    inside: (_w, v) => ({
      method: 'PATCH',
      url: `/api/tus${v('/docs/pending-inside.txt')}`,
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'abc',
    }),
    outside: () => ({
      method: 'PATCH',
      url: `/api/tus/${MARK}-up.txt`,
      headers: { ...TUS, 'upload-offset': '2', 'content-type': 'application/offset+octet-stream' },
      body: 'cde',
    }),
  },
  'DELETE /api/tus/*': {
    inside: (_w, v) => ({ method: 'DELETE', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'DELETE', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },

  'GET /api/trash': { inside: () => ({ method: 'GET', url: '/api/trash' }) },
  'HEAD /api/trash': { inside: () => ({ method: 'HEAD', url: '/api/trash' }) },
  'POST /api/trash/:id/restore': {
    inside: (w) => ({ method: 'POST', url: `/api/trash/${w.trashInside}/restore` }),
    outside: (w) => ({ method: 'POST', url: `/api/trash/${w.trashOutside}/restore` }),
  },
  'DELETE /api/trash/:id': {
    inside: (w) => ({ method: 'DELETE', url: `/api/trash/${w.trashInside}` }),
    outside: (w) => ({ method: 'DELETE', url: `/api/trash/${w.trashOutside}` }),
  },
  'DELETE /api/trash': { inside: () => ({ method: 'DELETE', url: '/api/trash' }) },

  'POST /api/jobs': {
    inside: (_w, v) => ({
      method: 'POST',
      url: '/api/jobs',
      ...json({ action: 'copy', items: [v('/docs/inside.txt')], destination: v('/docs/sub/'), rename: true }),
    }),
    outside: () => ({
      method: 'POST',
      url: '/api/jobs',
      ...json({ action: 'copy', items: [`/secret-${MARK}.txt`], destination: `/${MARK}-dir/`, rename: true }),
    }),
    after: async (answer) => {
      if (answer.status === 202) await jobEnded((JSON.parse(answer.body) as { id: string }).id);
    },
  },
  'GET /api/jobs': { inside: () => ({ method: 'GET', url: '/api/jobs' }) },
  'HEAD /api/jobs': { inside: () => ({ method: 'HEAD', url: '/api/jobs' }) },
  'GET /api/jobs/:id': {
    inside: (w) => ({ method: 'GET', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'GET', url: `/api/jobs/${w.jobOutside}` }),
  },
  'HEAD /api/jobs/:id': {
    inside: (w) => ({ method: 'HEAD', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'HEAD', url: `/api/jobs/${w.jobOutside}` }),
  },
  'DELETE /api/jobs/:id': {
    inside: (w) => ({ method: 'DELETE', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'DELETE', url: `/api/jobs/${w.jobOutside}` }),
  },

  // Without an Upgrade a WebSocket route answers as a plain route would (the walk below also opens
  // a real WebSocket for GET).
  'HEAD /api/command': { inside: () => ({ method: 'HEAD', url: '/api/command' }), ok: [200, 400, 404, 426] },
  'HEAD /api/command/*': {
    inside: () => ({ method: 'HEAD', url: '/api/command/' }),
    ok: [200, 400, 404, 426],
  },

  'GET /api/dav/locks': { inside: () => ({ method: 'GET', url: '/api/dav/locks' }) },
  'HEAD /api/dav/locks': { inside: () => ({ method: 'HEAD', url: '/api/dav/locks' }) },
  // No such lock: the guard let the caller as far as the lookup (404), or refused it.
  'DELETE /api/dav/locks/:token': {
    inside: () => ({
      method: 'DELETE',
      url: '/api/dav/locks/opaquelocktoken:00000000-0000-0000-0000-000000000000',
    }),
    ok: [204, 404],
  },
  'GET /api/audit': { inside: () => ({ method: 'GET', url: '/api/audit' }) },
  'HEAD /api/audit': { inside: () => ({ method: 'HEAD', url: '/api/audit' }) },
  'GET /api/audit/export': { inside: () => ({ method: 'GET', url: '/api/audit/export?format=json' }) },
  'HEAD /api/audit/export': { inside: () => ({ method: 'HEAD', url: '/api/audit/export?format=json' }) },
  'GET /metrics': { inside: () => ({ method: 'GET', url: '/metrics' }) },
  'HEAD /metrics': { inside: () => ({ method: 'HEAD', url: '/metrics' }) },
};

function sampleOf(method: string, url: string): Sample | undefined {
  if (url === '/dav' || url === '/dav/*') return davSample(method, url === '/dav');
  // File Browser took any method here; a session renews itself with each.
  if (url === '/api/renew') {
    return {
      inside: () => ({
        method,
        url,
        ...(method === 'QUERY' && { headers: { 'content-type': 'text/plain' } }),
      }),
    };
  }
  return SAMPLES[`${method} ${url}`];
}

// ---------------------------------------------------------------------------------------------
// What a declaration promises each caller.

type Expected = 'refused' | 'allowed' | 'in folder' | 'share' | 'open';

/** The outcome a caller of `kind` must see, from the route's declaration alone. */
function expected(reach: RouteReach, kind: Caller, method: string): Expected {
  const r: Reach = reach[kind];
  if (r === 'open') return 'open';
  if (r === 'share') return 'share';
  if (r === 'refused') return 'refused';
  // A read-only token uses only the methods that change nothing, wherever it is let in.
  if (kind === 'readOnlyToken' && !READING_METHODS.has(method)) return 'refused';
  return r === 'folder' ? 'in folder' : 'allowed';
}

/** The refusal a caller of `kind` gets from a route that refuses it. */
function refusalOf(reach: RouteReach, kind: Caller, method: string): { status: number; says?: string } {
  if (kind === 'session' || kind === 'shareVisitor' || kind === 'anonymous') return { status: 401 };
  if (reach.token === 'refused') return { status: 403, says: 'API tokens cannot be used here' };
  const name = TOKEN_NAMES[kind];
  const readOnly =
    kind === 'readOnlyToken' && (reach.readOnlyToken === 'refused' || !READING_METHODS.has(method));
  return {
    status: 403,
    says: `the API token “${name}” ${readOnly ? 'is read-only' : 'is limited to one folder'}`,
  };
}

const GUARD_SAYS = ['API tokens cannot be used here', 'is read-only', 'is limited to one folder'];

/** Sends `req` as a caller of `kind` and checks nothing changed that `allowedChange` does not allow. */
async function call(kind: Caller, req: Req, dav: boolean): Promise<Answer> {
  // An anonymous client holds no share token either.
  const url = kind === 'anonymous' ? req.url.replace(/[?&]token=[^&]*/, '') : req.url;
  return send({ ...req, url, headers: { ...credentials(kind, dav), ...req.headers } });
}

function changed(before: Inventory, after: Inventory): { inside: boolean; outside: boolean } {
  return {
    inside: JSON.stringify(before.inside) !== JSON.stringify(after.inside),
    outside: JSON.stringify(before.outside) !== JSON.stringify(after.outside),
  };
}

/** Rebuilds the world when a request changed it (or ended the session it is built with). */
async function settle(now?: Inventory): Promise<void> {
  now ??= await inventory();
  const alive = await t.ctx.auth.verify(session).catch(() => undefined);
  const diff = changed(baseline, now);
  if (diff.inside || diff.outside || !alive) await buildWorld();
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  t = await startFilesApp({ loginRateLimit: 1_000_000, metrics: true, bcryptCost: TEST_BCRYPT_COST });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  t.ctx.jobs.on('finished', (job) => endedJobs.add(job.id));
  picture = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c33' } })
    .png()
    .toBuffer();
  await t.user(owner, { scope: `/${owner}`, perm: ALL_PERMS });
  for (const folder of ['spare', 'made']) await fs.mkdir(path.join(t.root, folder));
  baselineSettings = t.ctx.store.settings.get();
  session = await login();
  await fs.mkdir(path.join(home(), 'docs'), { recursive: true });
  for (const kind of ['token', 'readOnlyToken', 'folderToken'] as const) {
    const made = await makeToken(TOKEN_NAMES[kind], {
      readOnly: kind === 'readOnlyToken',
      ...(kind === 'folderToken' && { folder: '/docs' }),
    });
    secrets[kind] = made.secret;
    tokenIds[kind] = made.id;
  }
  await buildWorld();
}, 60_000);
afterAll(() => t.close());

describe('what every caller reaches', () => {
  it('has a request for every route the app registered, and a declaration for each', () => {
    const declared = t.routes.declaredReaches();
    const all = t.routes.entries().flatMap((e) => e.methods.map((m) => `${m} ${e.url}`));
    expect(declared.map((d) => `${d.method} ${d.url}`).sort()).toEqual(all.sort());
    const missing = declared
      .filter((d) => CALLERS.some((c) => !['open'].includes(d.reach[c])))
      .filter((d) => !(d.method === 'GET' && d.url.startsWith('/api/command')))
      .filter((d) => !sampleOf(d.method, d.url))
      .map((d) => `${d.method} ${d.url}`);
    expect(missing).toEqual([]);
  });

  it(
    'answers every route as its declaration says, to every kind of caller',
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      const check = (cond: boolean, what: string) => {
        if (!cond) failures.push(what);
      };
      for (const { method, url, reach } of t.routes.declaredReaches()) {
        const dav = url === '/dav' || url.startsWith('/dav/');
        if (method === 'GET' && url.startsWith('/api/command')) continue; // a WebSocket: below
        const sample = sampleOf(method, url);
        const openStatuses = new Set<number>();
        for (const kind of CALLERS) {
          const label = `${method} ${url} as ${kind}`;
          const want = expected(reach, kind, method);
          const view = kind === 'folderToken' ? folderView : scopeView;
          if (want === 'open') {
            const res = await call(
              kind,
              sample?.inside(world, scopeView) ?? { method, url: rawUrl(url) },
              dav,
            );
            openStatuses.add(res.status);
            check(res.status !== 401, `${label}: an open route asked for a credential (${res.status})`);
            await settle();
            continue;
          }
          if (!sample) {
            failures.push(`${label}: no sample request`);
            continue;
          }
          for (const aim of ['inside', 'outside'] as const) {
            const make = aim === 'inside' ? sample.inside : sample.outside;
            if (!make) continue;
            // Whole-scope callers name outside things as reachable: only the folder token aims out.
            if (aim === 'outside' && want !== 'in folder' && want !== 'share' && want !== 'refused') continue;
            const req = aim === 'inside' ? sample.inside(world, view) : sample.outside!(world);
            // The world is as built (settled after every request): its inventory is the baseline.
            const before = baseline;
            const res = await call(kind, req, dav);
            await sample.after?.(res);
            const after = await inventory();
            const diff = changed(before, after);
            const what = `${label} (${aim}: ${req.method} ${req.url}) → ${res.status} ${res.body.slice(0, 120)}`;
            if (want === 'refused') {
              const refusal = refusalOf(reach, kind, method);
              check(
                res.status === refusal.status || (url.startsWith('/api/public/') && res.status === 404),
                `${what}: expected ${refusal.status}`,
              );
              if (refusal.says && method !== 'HEAD')
                check(res.body.includes(refusal.says), `${what}: should say “${refusal.says}”`);
              check(!diff.inside && !diff.outside, `${what}: a refused request changed something`);
            } else if (
              want === 'allowed' ||
              (want === 'in folder' && aim === 'inside') ||
              (want === 'share' && aim === 'inside')
            ) {
              const okStatuses = sample.ok ?? [];
              check(
                res.status < 400 || okStatuses.includes(res.status),
                `${what}: an allowed caller was not served`,
              );
              check(
                res.status === 401 || !GUARD_SAYS.some((s) => res.body.includes(s)),
                `${what}: refused by the guard`,
              );
              check(res.status !== 401, `${what}: refused as unauthenticated`);
            }
            if (want === 'in folder' || want === 'share') {
              check(!diff.outside, `${what}: changed something outside the folder`);
              if (res.status < 300) {
                check(!res.body.includes(CONTENT), `${what}: answered with a file from outside the folder`);
                const named = req.url.includes(MARK) || String(req.body ?? '').includes(MARK);
                if (!sample.echoes || !named) {
                  check(!res.body.includes(MARK), `${what}: answered with something from outside the folder`);
                }
              }
            }
            if (want === 'share' && aim === 'inside' && kind !== 'shareVisitor') {
              // The link is the credential: an account's own one, sent without the link's token, is not read.
              const bare = { ...req, url: req.url.replace(/[?&]token=[^&]*/, '') };
              const res2 = await call(kind, bare, dav);
              check(res2.status === 401, `${label}: without the link's token → ${res2.status}`);
            }
            await settle(after);
          }
        }
        check(
          openStatuses.size <= 1,
          `${method} ${url}: an open route answered callers differently (${[...openStatuses]})`,
        );
      }
      expect(failures).toEqual([]);
    },
  );

  it('opens the command WebSocket to the callers its declaration lets in, and to no other', async () => {
    const reach = t.routes
      .declaredReaches()
      .find((d) => d.method === 'GET' && d.url === '/api/command/*')!.reach;
    for (const kind of CALLERS) {
      const headers = credentials(kind, false);
      const outcome = await new Promise<number | 'open'>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/command/`, { headers });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          ws.terminate();
        });
        ws.on('open', () => {
          resolve('open');
          ws.close();
        });
        ws.on('error', (err) => {
          if (!/Unexpected server response/.test(err.message)) reject(err);
        });
      });
      const want = expected(reach, kind, 'GET');
      expect(outcome, kind).toBe(want === 'refused' ? refusalOf(reach, kind, 'GET').status : 'open');
    }
  });
});

describe('a route without a declaration', () => {
  it('stops the server from starting, and so does one the policy could not serve as declared', async () => {
    const base = await fs.mkdtemp(path.join(t.base, 'undeclared-'));
    const store = openStore(path.join(base, 'db', 'filebrowser.db'));
    try {
      const { app } = await buildApp(
        {
          ...defaultConfig(),
          root: base,
          database: path.join(base, 'db', 'filebrowser.db'),
          cacheDir: base,
          webDist: path.join(base, 'web'),
        },
        store,
      );
      expect(() => app.get('/api/undeclared', async () => 'x')).toThrow(/declares no reach for its callers/);
      expect(() =>
        app.post(
          '/api/writes',
          { config: { reach: { ...FILE_CHANGES, readOnlyToken: 'account' } } },
          async () => 'x',
        ),
      ).toThrow(/read-only tokens cannot reach a route that only changes things/);
      expect(() =>
        app.get(
          '/api/admin-thing',
          { config: { reach: { ...FILE_CHANGES, readOnlyToken: 'refused' }, needs: 'admin' } },
          async () => 'x',
        ),
      ).toThrow(/folder tokens withhold admin/);
      expect(() => app.get('/api/fine', { config: { reach: OPEN } }, async () => 'x')).not.toThrow();
      await app.close();
    } finally {
      store.close();
    }
  });
});
