import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Permissions } from '@filebrowser/contract';
import sharp from 'sharp';
import { afterAll, beforeAll } from 'vitest';
import { READING_METHODS, type Caller, type Reach, type RouteReach } from '../src/auth/policy.js';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';
import { TEST_BCRYPT_COST } from './helpers.js';

/**
 * The world the reach walk runs in: an app on a real port, a user with a session and three tokens,
 * the files, shares, locks and jobs each route acts on, and an inventory that tells what a request
 * changed.
 */

/** In every name and content outside the folder token's folder, and nowhere inside it. */
export const MARK = 'k9c1e';
/** In the content of every file outside the folder token's folder. */
export const CONTENT = 'zq7-outside-content';
export const ALL_PERMS: Permissions = {
  admin: true,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};
export const SHARE_PASSWORD = 'share-password-for-the-walk';
export const TUS = { 'tus-resumable': '1.0.0' };
export const LOCKINFO =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>walk</D:owner></D:lockinfo>';
export const PROPPATCH =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:c>v</Z:c></D:prop></D:set></D:propertyupdate>';

export interface Req {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  body: string;
}

/** What the walk knows of the world it built (ids change with each rebuild). */
export interface World {
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
export type View = (scopePath: string) => string;

export interface Sample {
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

export let t: FilesApp;
export let port: number;
export let world: World;
export const owner = 'walker';
export const home = () => path.join(t.root, owner);
export let session: string;
export const secrets: Record<'token' | 'readOnlyToken' | 'folderToken', string> = {
  token: '',
  readOnlyToken: '',
  folderToken: '',
};
export const TOKEN_NAMES = {
  token: 'walk-full',
  readOnlyToken: 'walk-ro',
  folderToken: 'walk-folder',
} as const;

/** One request over a real connection. */
export function send(req: Req): Promise<Answer> {
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
export function asSession(req: Req): Promise<Answer> {
  return send({ ...req, headers: { 'x-auth': session, ...req.headers } });
}

export const json = (payload: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(payload),
});

/** The credential a caller of `kind` sends, by how the route takes them. */
export function credentials(kind: Caller, dav: boolean): Record<string, string> {
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

export const scopeView: View = (p) => p;
export const folderView: View = (p) => {
  if (p === '/docs' || p === '/docs/') return '/';
  if (!p.startsWith('/docs/')) throw new Error(`${p} is not inside the folder`);
  return p.slice('/docs'.length);
};
export const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');

// ---------------------------------------------------------------------------------------------
// The world: the owner's scope with the folder token's folder /docs, and things outside it of
// every kind a route keeps (files, trash items, pending uploads, jobs, a share, locks).

export async function login(): Promise<string> {
  const res = await send({
    method: 'POST',
    url: '/api/login',
    ...json({ username: owner, password: PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.body}`);
  return res.body;
}

export async function ok(
  answer: Promise<Answer>,
  what: string,
  statuses = [200, 201, 202, 204],
): Promise<Answer> {
  const res = await answer;
  if (!statuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${res.body}`);
  return res;
}

export async function makeToken(
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
export async function buildWorld(): Promise<void> {
  const { ctx } = t;
  if (!(await ctx.auth.verify(session).catch(() => undefined))) session = await login();
  const ownerId = (await ctx.store.users.getByUsername(owner))!.id;
  // What earlier requests left: uploads, trash, locks, props, users, tokens, settings.
  for (const u of await ctx.store.uploads.all()) {
    await ctx.store.uploads.delete(u.id);
    await fs.rm(u.staging, { force: true });
  }
  await ok(asSession({ method: 'DELETE', url: '/api/trash' }), 'empty the trash');
  await ctx.store.davLocks.removeWithin('default', '/');
  await ctx.store.davProps.remove('default', '/');
  for (const u of await ctx.store.users.list()) {
    if (!['admin', owner, 'spare'].includes(u.username)) await ctx.store.users.delete(u.id);
  }
  const keep = new Set([...Object.values(tokenIds), world?.spareTokenId]);
  for (const tok of await ctx.store.apiTokens.listByUser(ownerId)) {
    if (!keep.has(tok.id)) await ctx.store.apiTokens.delete(tok.id, ownerId);
  }
  for (const s of await ctx.store.shares.list(ownerId)) {
    if (s.hash !== world?.shareHash) await ctx.store.shares.delete(s.hash);
  }
  await ctx.store.settings.save(baselineSettings);

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
  const items = await ctx.store.trash.list(ownerId);
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
  if (!(await ctx.store.shares.get(shareHash))) {
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

  if (!(await ctx.store.users.getByUsername('spare'))) {
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
  const spareUserId = (await ctx.store.users.getByUsername('spare'))!.id;
  let spareTokenId = world?.spareTokenId ?? '';
  if (!(await ctx.store.apiTokens.get(spareTokenId))) spareTokenId = (await makeToken('spare', {})).id;

  // A job started from outside the folder (the session's), and one inside it (the token's).
  const known = (id: string | undefined) => id !== undefined && t.ctx.jobs.here({ id: ownerId }, id);
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

export async function startJob(
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
export const endedJobs = new Set<string>();

/** Waits for a job to end: the registry says when (no clock). */
export function jobEnded(id: string): Promise<void> {
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

export let picture: Buffer;
export let baselineSettings: ReturnType<FilesApp['ctx']['store']['settings']['get']>;
export const tokenIds: Record<string, string> = {};

// ---------------------------------------------------------------------------------------------
// What the world holds, split into what lies inside the folder token's folder and the rest.

export interface Inventory {
  inside: string[];
  outside: string[];
}

export let baseline: Inventory;

export async function files(dir: string, rel = ''): Promise<string[]> {
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

export async function inventory(): Promise<Inventory> {
  const { store } = t.ctx;
  const ownerId = (await store.users.getByUsername(owner))?.id ?? -1;
  const inside: string[] = [];
  const outside: string[] = [];
  const place = (isInside: boolean, what: string) => (isInside ? inside : outside).push(what);
  for (const f of await files(t.root))
    place(f.includes(`/${owner}/docs/`) || f.endsWith(`/${owner}/docs`), f);
  const inFolder = (rootPath: string) =>
    rootPath === `/${owner}/docs` || rootPath.startsWith(`/${owner}/docs/`);
  for (const i of await store.trash.list(ownerId)) place(inFolder(i.rootPath), `trash ${i.id}`);
  for (const u of await store.uploads.all()) {
    const size = await fs.stat(u.staging).then(
      (s) => s.size,
      () => -1,
    );
    place(u.path.startsWith('/docs/'), `upload ${u.path} ${u.id} ${size}`);
  }
  for (const l of await store.davLocks.related('default', '/')) place(inFolder(l.path), `lock ${l.path}`);
  for (const [p, props] of await store.davProps.listWithin('default', '/', true)) {
    place(inFolder(p), `props ${p} ${props.length}`);
  }
  // What no folder token may change at all.
  outside.push(...(await store.shares.list()).map((s) => `share ${s.hash} ${s.rootPath}`));
  outside.push(...(await store.users.list()).map((u) => `user ${u.id} ${u.username} ${u.updatedAt}`));
  outside.push(...(await store.apiTokens.listByUser(ownerId)).map((k) => `token ${k.id}`));
  outside.push(`settings ${JSON.stringify(store.settings.get())}`);
  const job = (id: string) => t.ctx.jobs.here({ id: ownerId }, id)?.job;
  if (world) outside.push(`job ${JSON.stringify(job(world.jobOutside))}`);
  return { inside: inside.sort(), outside: outside.sort() };
}

// ---------------------------------------------------------------------------------------------
// What a declaration promises each caller.

export type Expected = 'refused' | 'allowed' | 'in folder' | 'share' | 'open';

/** The outcome a caller of `kind` must see, from the route's declaration alone. */
export function expected(reach: RouteReach, kind: Caller, method: string): Expected {
  const r: Reach = reach[kind];
  if (r === 'open') return 'open';
  if (r === 'share') return 'share';
  if (r === 'refused') return 'refused';
  // A read-only token uses only the methods that change nothing, wherever it is let in.
  if (kind === 'readOnlyToken' && !READING_METHODS.has(method)) return 'refused';
  return r === 'folder' ? 'in folder' : 'allowed';
}

/** The refusal a caller of `kind` gets from a route that refuses it. */
export function refusalOf(
  reach: RouteReach,
  kind: Caller,
  method: string,
): { status: number; says?: string } {
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

export const GUARD_SAYS = ['API tokens cannot be used here', 'is read-only', 'is limited to one folder'];

/**
 * Sends `req` as a caller of `kind` and checks nothing changed that `allowedChange` does not allow.
 */
export async function call(kind: Caller, req: Req, dav: boolean): Promise<Answer> {
  // An anonymous client holds no share token either.
  const url = kind === 'anonymous' ? req.url.replace(/[?&]token=[^&]*/, '') : req.url;
  return send({ ...req, url, headers: { ...credentials(kind, dav), ...req.headers } });
}

export function changed(before: Inventory, after: Inventory): { inside: boolean; outside: boolean } {
  return {
    inside: JSON.stringify(before.inside) !== JSON.stringify(after.inside),
    outside: JSON.stringify(before.outside) !== JSON.stringify(after.outside),
  };
}

/** Rebuilds the world when a request changed it (or ended the session it is built with). */
export async function settle(now?: Inventory): Promise<void> {
  now ??= await inventory();
  const alive = await t.ctx.auth.verify(session).catch(() => undefined);
  const diff = changed(baseline, now);
  if (diff.inside || diff.outside || !alive) await buildWorld();
}

// ---------------------------------------------------------------------------------------------

/**
 * Starts the app on a port, signs the walker in, makes the three tokens and builds the world once
 * before the file's tests; closes the app after them.
 */
export function useReachWorld(): void {
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
}
