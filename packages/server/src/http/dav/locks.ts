import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { assertMay } from '../../auth/policy.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../errors.js';
import { etagOf } from '../../files/listing/go-format.js';
import { writeFileAtomic } from '../../files/change/write.js';
import type { Opened } from '../../files/access/resolver.js';
import { fileAccessFor } from '../../files/access/access.js';
import { liveFor } from '../../files/change/locks.js';
import type { DavLock } from '../../store/dav.js';
import { withHooks } from '../file-hooks.js';
import { hrefOf, virtualOfUrl } from './paths.js';
import { header, notify, type DavRequest } from './request.js';
import {
  DavError,
  davChild,
  escapeXml,
  isDav,
  parseXml,
  readBody,
  childElements,
  serializeXml,
} from './xml.js';

/** Longest lock a client gets at a time (an `Infinite` request gets this): abandoned locks must end. */
export const MAX_TIMEOUT = 24 * 3600;
const DEFAULT_TIMEOUT = 3600;
/** Longest a lock lasts from when it was taken, however often refreshed: then it must be taken again. */
export const MAX_LOCK_LIFETIME = 7 * 24 * 3600;
/** Locks one place may have (shared locks; an exclusive one is alone anyway). */
export const MAX_LOCKS_PER_PLACE = 16;
/** Locks one user may hold at once. */
export const MAX_LOCKS_PER_USER = 500;

interface IfCondition {
  not: boolean;
  token?: string;
  etag?: string;
}

interface IfList {
  /** The tagged resource (a URL or absolute path); untagged lists apply to the request URL. */
  resource?: string;
  conditions: IfCondition[];
}

/** Parses an `If` header (RFC 4918 10.4); 400 when it is not one. */
export function parseIf(text: string): IfList[] {
  const lists: IfList[] = [];
  let i = 0;
  let tag: string | undefined;
  const bad = () => badRequest('the If header is malformed');
  const skip = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const until = (end: string) => {
    const j = text.indexOf(end, i + 1);
    if (j < 0) throw bad();
    const value = text.slice(i + 1, j);
    i = j + 1;
    return value;
  };
  skip();
  while (i < text.length) {
    if (text[i] === '<') {
      tag = until('>');
    } else if (text[i] === '(') {
      i++;
      const conditions: IfCondition[] = [];
      for (;;) {
        skip();
        let not = false;
        if (text.slice(i, i + 3).toLowerCase() === 'not') {
          not = true;
          i += 3;
          skip();
        }
        if (text[i] === '<') conditions.push({ not, token: until('>') });
        else if (text[i] === '[') conditions.push({ not, etag: until(']') });
        else if (text[i] === ')' && !not && conditions.length > 0) {
          i++;
          break;
        } else throw bad();
      }
      lists.push({ ...(tag !== undefined && { resource: tag }), conditions });
    } else {
      throw bad();
    }
    skip();
  }
  if (lists.length === 0) throw bad();
  return lists;
}

/** The place of an opened path below its root, the key of its locks and dead properties. */
export function davPlace(dav: DavRequest, o: Pick<Opened, 'entry'>): string {
  const p = dav.access.rootPathOf(o.entry);
  if (p === undefined) throw forbidden();
  return p;
}

/**
 * The place a lock on an opened path is kept at: what the path leads to. A lock taken through a
 * symbolic link protects the file or folder behind it, whatever name a write comes by (writes
 * check both the entry and what it leads to, files/change/locks.ts).
 */
function lockPlace(dav: DavRequest, o: Pick<Opened, 'real'>): string {
  const p = dav.access.rootPathOf(o.real);
  if (p === undefined) throw forbidden();
  return p;
}

const isAncestor = (a: string, b: string) => a !== b && (a === '/' || b.startsWith(a + '/'));

/** The locks that cover `place`: on it, or on an ancestor with depth infinity. */
function covering(locks: DavLock[], place: string): DavLock[] {
  return locks.filter((l) => l.path === place || (l.depth === 'infinity' && isAncestor(l.path, place)));
}

export async function locksOn(dav: DavRequest, place: string): Promise<DavLock[]> {
  return covering(await dav.ctx.store.davLocks.related(dav.access.root.id, place), place);
}

async function stateOf(dav: DavRequest, virtual: string): Promise<{ place?: string; etag?: string }> {
  let o: Opened;
  try {
    o = await dav.access.open(virtual);
  } catch {
    return {};
  }
  try {
    const place = dav.access.rootPathOf(o.real);
    const etag = o.node && o.stat?.isFile() ? etagOf(await o.node.statNs()) : undefined;
    return { ...(place !== undefined && { place }), ...(etag && { etag }) };
  } finally {
    await o.close();
  }
}

const bareEtag = (t: string) => t.trim().replace(/^W\//, '');

/**
 * Evaluates the request's `If` header: records the lock tokens it submits, and whether it
 * holds (one list true). Lists name lock tokens (true when that lock covers the resource) and
 * entity tags; `Not` inverts a condition.
 */
export async function evaluateIf(dav: DavRequest): Promise<void> {
  const text = header(dav, 'if');
  if (!text) return;
  const lists = parseIf(text);
  for (const list of lists) {
    for (const c of list.conditions) if (c.token && !c.not) dav.submitted.add(c.token);
  }
  const states = new Map<string, { place?: string; etag?: string }>();
  for (const list of lists) {
    const virtual =
      list.resource === undefined ? dav.virtual : virtualOfUrl(dav.ctx, dav.request, list.resource);
    if (virtual === undefined) continue;
    let state = states.get(virtual);
    if (!state) {
      state = await stateOf(dav, virtual);
      states.set(virtual, state);
    }
    const locks = state.place === undefined ? [] : await locksOn(dav, state.place);
    const holds = list.conditions.every((c) => {
      const match = c.token
        ? locks.some((l) => l.token === c.token)
        : state.etag !== undefined && bareEtag(c.etag!) === bareEtag(state.etag);
      return c.not ? !match : match;
    });
    if (holds) return;
  }
  dav.ifFailed = true;
}

/** The hrefs of lock roots, for `DAV:lock-token-submitted` (a 423 answer of a write). */
export function lockRootsXml(dav: DavRequest, places: readonly string[]): string {
  const hrefs = places
    .map((p) => dav.access.virtualOfRootPath(p))
    .filter((v): v is string => v !== undefined)
    .map((v) => `<D:href>${escapeXml(hrefOf(dav.prefix, v, false))}</D:href>`)
    .join('');
  return `<D:lock-token-submitted>${hrefs}</D:lock-token-submitted>`;
}

/** The existing locks a new one conflicts with by their paths (one of them exclusive, overlapping). */
function pathConflicts(existing: DavLock[], place: string, scope: DavLock['scope'], depth: DavLock['depth']) {
  return existing.filter(
    (l) =>
      (l.scope === 'exclusive' || scope === 'exclusive') &&
      (l.path === place ||
        (l.depth === 'infinity' && isAncestor(l.path, place)) ||
        (depth === 'infinity' && isAncestor(place, l.path))),
  );
}

/**
 * The tokens of the locks a new lock may ignore although their paths conflict: those that no
 * longer hold that place for their holders (see files/locks.ts). 423 when one still does.
 */
async function ignorableConflicts(
  dav: DavRequest,
  place: string,
  scope: DavLock['scope'],
  depth: DavLock['depth'],
): Promise<Set<string>> {
  const ignorable = new Set<string>();
  const byPath = pathConflicts(
    await dav.ctx.store.davLocks.related(dav.access.root.id, place),
    place,
    scope,
    depth,
  );
  const accessOf = (user: Parameters<typeof fileAccessFor>[1]) =>
    fileAccessFor(dav.ctx, user, dav.access.root);
  for (const l of byPath) {
    // A lock below a new depth-infinity one holds its own root, which the new one would cover.
    const at = isAncestor(place, l.path) ? l.path : place;
    if (await liveFor(dav.ctx, l, at, accessOf)) throw lockConflict();
    ignorable.add(l.token);
  }
  return ignorable;
}

const lockConflict = () => new DavError('locked', '<D:no-conflicting-lock/>', 'the resource is locked');

/** 507 when the place or the user already has as many locks as they may. */
async function assertRoomForLock(dav: DavRequest, place: string): Promise<void> {
  const store = dav.ctx.store.davLocks;
  if ((await store.countAt(dav.access.root.id, place)) >= MAX_LOCKS_PER_PLACE) {
    throw new AppError(
      'insufficient_storage',
      `this resource has ${MAX_LOCKS_PER_PLACE} locks already, the most it may have`,
    );
  }
  if ((await store.countOfUser(dav.user.id)) >= MAX_LOCKS_PER_USER) {
    throw new AppError(
      'insufficient_storage',
      `you hold ${MAX_LOCKS_PER_USER} WebDAV locks already, the most one user may: unlock some first`,
    );
  }
}

/** `Timeout: Second-600, Infinite`: the first the server understands, capped. */
function timeoutOf(dav: DavRequest): number {
  for (const part of (header(dav, 'timeout') ?? '').split(',')) {
    const t = part.trim();
    if (/^infinite$/i.test(t)) return MAX_TIMEOUT;
    const m = /^Second-(\d+)$/i.exec(t);
    if (m) return Math.max(1, Math.min(Number(m[1]), MAX_TIMEOUT));
  }
  return DEFAULT_TIMEOUT;
}

/**
 * The timeout a LOCK or a refresh gets at `now`: what `Timeout` asks (capped), and never past
 * `MAX_LOCK_LIFETIME` after the lock was taken.
 */
function lifetimeOf(dav: DavRequest, now: number, createdAt: number): { timeout: number; expiresAt: number } {
  const end = createdAt + MAX_LOCK_LIFETIME * 1000;
  const expiresAt = Math.min(now + timeoutOf(dav) * 1000, end);
  return { timeout: Math.max(0, Math.ceil((expiresAt - now) / 1000)), expiresAt };
}

/** One lock as a DAV:activelock element. */
export function activeLock(dav: DavRequest, l: DavLock, now = Date.now()): string {
  const root = dav.access.virtualOfRootPath(l.path);
  const left = Math.max(0, Math.ceil((l.expiresAt - now) / 1000));
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${l.scope}/></D:lockscope>` +
    `<D:depth>${l.depth}</D:depth>${l.owner}<D:timeout>Second-${left}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(l.token)}</D:href></D:locktoken>` +
    (root === undefined
      ? ''
      : `<D:lockroot><D:href>${escapeXml(hrefOf(dav.prefix, root, false))}</D:href></D:lockroot>`) +
    `</D:activelock>`
  );
}

export const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

function sendLockDiscovery(dav: DavRequest, locks: DavLock[], status: number) {
  const body =
    `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>` +
    locks.map((l) => activeLock(dav, l)).join('') +
    `</D:lockdiscovery></D:prop>`;
  return dav.reply.code(status).type('application/xml; charset=utf-8').send(body);
}

/** LOCK: a new lock (creating an empty file at an unmapped URL), or a refresh when there is no body. */
export async function handleLock(dav: DavRequest) {
  const doc = parseXml(await readBody(dav.request, 'LOCK'));
  const r = await dav.access.open(dav.virtual);
  try {
    if (!doc) return await refresh(dav, r);
    const info = doc.documentElement!;
    if (!isDav(info, 'lockinfo')) throw badRequest('a LOCK body must be a DAV:lockinfo');
    const scopeEl = davChild(info, 'lockscope');
    const scopeName = scopeEl && childElements(scopeEl)[0];
    const scope =
      scopeName && isDav(scopeName, 'shared')
        ? 'shared'
        : scopeName && isDav(scopeName, 'exclusive')
          ? 'exclusive'
          : undefined;
    const typeEl = davChild(info, 'locktype');
    if (!scope || !typeEl || !childElements(typeEl).some((c) => isDav(c, 'write'))) {
      throw badRequest('a lock must be a write lock, exclusive or shared');
    }
    const ownerEl = davChild(info, 'owner');
    const owner = ownerEl ? serializeXml(ownerEl) : '';
    const depthHeader = (header(dav, 'depth') ?? 'infinity').toLowerCase();
    if (depthHeader !== '0' && depthHeader !== 'infinity') throw badRequest('Depth must be 0 or infinity');
    const depth = depthHeader === '0' ? '0' : 'infinity';

    const exists = !!r.linkStat;
    assertMay(dav.access.perm, exists ? 'modify' : 'create');
    if (!exists && (r.missing.length > 1 || r.blocked)) throw conflict('the parent folder does not exist');
    const place = lockPlace(dav, r);
    const store = dav.ctx.store.davLocks;
    const ignorable = await ignorableConflicts(dav, place, scope, depth);
    await assertRoomForLock(dav, place);
    if (!exists) {
      const { fileMode, dirMode } = dav.ctx.store.settings.get();
      await withHooks(dav.ctx, dav.user, dav.reply, 'upload', { file: r.real }, () =>
        writeFileAtomic(dav.access, r, Readable.from([]), { fileMode, dirMode }),
      );
      await notify(dav, 'upload', () => dav.events.changed?.(r.real));
    }
    // Checked again with nothing awaited before the lock is stored: a lock taken meanwhile wins.
    const taken = pathConflicts(await store.related(dav.access.root.id, place), place, scope, depth);
    if (taken.some((l) => !ignorable.has(l.token))) throw lockConflict();
    await assertRoomForLock(dav, place);
    const now = Date.now();
    const { timeout, expiresAt } = lifetimeOf(dav, now, now);
    const lock: DavLock = {
      token: `opaquelocktoken:${crypto.randomUUID()}`,
      rootId: dav.access.root.id,
      path: place,
      userId: dav.user.id,
      scope,
      depth,
      owner,
      timeout,
      expiresAt,
      createdAt: now,
      ...(dav.request.apiToken ? { apiToken: dav.request.apiToken.token.id } : {}),
    };
    await store.create(lock);
    void dav.reply.header('Lock-Token', `<${lock.token}>`);
    return sendLockDiscovery(dav, [lock], exists ? 200 : 201);
  } finally {
    await r.close();
  }
}

/** A LOCK without a body refreshes the user's lock named in the If header. */
async function refresh(dav: DavRequest, r: Opened) {
  if (!r.linkStat) throw notFound();
  const place = lockPlace(dav, r);
  const lock = (await locksOn(dav, place)).find((l) => dav.submitted.has(l.token));
  if (!lock) throw new AppError('precondition_failed', 'no lock of this resource was named in the If header');
  if (lock.userId !== dav.user.id) throw forbidden('the lock belongs to someone else');
  const { timeout, expiresAt } = lifetimeOf(dav, Date.now(), lock.createdAt);
  await dav.ctx.store.davLocks.refresh(lock.token, timeout, expiresAt);
  return sendLockDiscovery(dav, [{ ...lock, timeout, expiresAt }], 200);
}

/** UNLOCK: removes the user's lock named by Lock-Token, which must cover the request URL. */
export async function handleUnlock(dav: DavRequest) {
  const raw = header(dav, 'lock-token')?.trim() ?? '';
  const token = raw.startsWith('<') && raw.endsWith('>') ? raw.slice(1, -1) : '';
  if (!token) throw badRequest('a Lock-Token header is required');
  const r = await dav.access.resolve(dav.virtual, { followFinal: true });
  const place = dav.access.rootPathOf(r.real);
  const lock = await dav.ctx.store.davLocks.get(token);
  if (!lock || place === undefined || !covering([lock], place).length) {
    throw new DavError('conflict', '<D:lock-token-matches-request-uri/>', 'no such lock on this resource');
  }
  if (lock.userId !== dav.user.id) throw forbidden('the lock belongs to someone else');
  await dav.ctx.store.davLocks.delete(token);
  return dav.reply.code(204).send();
}
