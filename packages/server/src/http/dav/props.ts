import { Readable } from 'node:stream';
import { loopTurn } from '../../heavy-work.js';
import type { Element } from '@xmldom/xmldom';
import { assertMay } from '../../auth/policy.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import { listDirectoryEntries } from '../../files/listing/folder-listing.js';
import { mimeByExtension } from '../../files/listing/mime.js';
import type { Opened } from '../../files/access/resolver.js';
import type { DavLock, DeadProp } from '../../store/dav.js';
import { activeLock, davPlace, SUPPORTED_LOCK } from './locks.js';
import { heavyTurn, isBigFolder } from '../heavy.js';
import { Members } from './members.js';
import { MAX_PROP_BYTES_PER_USER, propHoldsOf } from './prop-holds.js';
import { hrefOf } from './paths.js';
import { header, type DavRequest } from './request.js';
import {
  childElements,
  DAV,
  DavError,
  davChild,
  emptyElement,
  escapeXml,
  isDav,
  parseXml,
  readBody,
  serializeXml,
} from './xml.js';

/** What PROPFIND reports of one resource; times as whole seconds and nanoseconds (exact numbers). */
interface Entry {
  /** The escaped href. */
  href: string;
  name: string;
  place: string;
  isDir: boolean;
  size: number;
  mtimeSec: number;
  mtimeNsec: number;
  birthSec: number;
  birthNsec: number;
}

const LIVE = [
  'resourcetype',
  'displayname',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'getlastmodified',
  'creationdate',
  'lockdiscovery',
  'supportedlock',
] as const;
type Live = (typeof LIVE)[number];
const isLive = (name: string): name is Live => (LIVE as readonly string[]).includes(name);

const nameOf = (virtual: string) => virtual.slice(virtual.lastIndexOf('/') + 1);

const GIGA = 1_000_000_000n;

/**
 * HTTP and ISO texts of a time by its whole second: a folder's files mostly share few seconds,
 * and formatting a Date twice per entry was the largest cost of a 10,000-entry PROPFIND.
 */
const secondTexts = new Map<number, { http: string; iso: string }>();

function textsOf(sec: number, nsec: number) {
  // Milliseconds truncated towards zero, as `Number(ns / 1_000_000n)` did, then the second shown.
  const second = Math.floor((sec * 1000 + Math.trunc(nsec / 1e6)) / 1000);
  let t = secondTexts.get(second);
  if (!t) {
    const d = new Date(second * 1000);
    t = { http: d.toUTCString(), iso: d.toISOString().replace(/\.\d+Z$/, 'Z') };
    if (secondTexts.size >= 4096) secondTexts.clear();
    secondTexts.set(second, t);
  }
  return t;
}

/** The value of a live property, or undefined when the resource has none (a folder's length). */
function liveValue(dav: DavRequest, e: Entry, name: Live, locks: DavLock[]): string | undefined {
  switch (name) {
    case 'resourcetype':
      return e.isDir ? '<D:collection/>' : '';
    case 'displayname':
      return escapeXml(e.name);
    case 'getcontentlength':
      return e.isDir ? undefined : String(e.size);
    case 'getcontenttype':
      return e.isDir ? undefined : escapeXml(mimeByExtension(e.name) || 'application/octet-stream');
    case 'getetag':
      // etagOf's text ("hex mtime in ns, hex size"), with its quotes escaped
      return e.isDir
        ? undefined
        : `&#34;${(BigInt(e.mtimeSec) * GIGA + BigInt(e.mtimeNsec)).toString(16)}${e.size.toString(16)}&#34;`;
    case 'getlastmodified':
      return textsOf(e.mtimeSec, e.mtimeNsec).http;
    case 'creationdate':
      return e.birthSec || e.birthNsec
        ? textsOf(e.birthSec, e.birthNsec).iso
        : textsOf(e.mtimeSec, e.mtimeNsec).iso;
    case 'lockdiscovery':
      return locks.length === 0 ? '' : locks.map((l) => activeLock(dav, l)).join('');
    case 'supportedlock':
      return SUPPORTED_LOCK;
  }
}

type Query =
  { kind: 'allprop' } | { kind: 'propname' } | { kind: 'prop'; names: Array<{ ns: string; name: string }> };

function queryOf(doc: ReturnType<typeof parseXml>): Query {
  if (!doc) return { kind: 'allprop' };
  const root = doc.documentElement!;
  if (!isDav(root, 'propfind')) throw badRequest('a PROPFIND body must be a DAV:propfind');
  if (davChild(root, 'propname')) return { kind: 'propname' };
  const prop = davChild(root, 'prop');
  if (prop) {
    return {
      kind: 'prop',
      names: childElements(prop).map((el) => ({ ns: el.namespaceURI ?? '', name: el.localName ?? '' })),
    };
  }
  if (davChild(root, 'allprop')) return { kind: 'allprop' };
  throw badRequest('a DAV:propfind needs allprop, propname or prop');
}

function propstat(props: string, status: string): string {
  if (props === '') return '';
  return `<D:propstat><D:prop>${props}</D:prop><D:status>HTTP/1.1 ${status}</D:status></D:propstat>`;
}

const liveElement = (name: string, value: string) =>
  value === '' ? `<D:${name}/>` : `<D:${name}>${value}</D:${name}>`;

/** One `D:response`, built as one string: a 10,000-entry answer makes no array per entry. */
function responseOf(dav: DavRequest, e: Entry, q: Query, dead: DeadProp[], locks: DavLock[]): string {
  let found = '';
  let missing = '';
  if (q.kind === 'prop') {
    for (const { ns, name } of q.names) {
      const value = ns === DAV && isLive(name) ? liveValue(dav, e, name, locks) : undefined;
      if (value !== undefined) {
        found += liveElement(name, value);
        continue;
      }
      const d = dead.find((p) => p.ns === ns && p.name === name);
      if (d) found += d.xml;
      else missing += emptyElement(ns, name);
    }
  } else {
    for (const name of LIVE) {
      const value = liveValue(dav, e, name, locks);
      if (value !== undefined) found += q.kind === 'propname' ? `<D:${name}/>` : liveElement(name, value);
    }
    for (const d of dead) found += q.kind === 'propname' ? emptyElement(d.ns, d.name) : d.xml;
  }
  return `<D:response><D:href>${e.href}</D:href>${propstat(found, '200 OK')}${propstat(missing, '404 Not Found')}</D:response>`;
}

/** A multistatus answer is written in pieces of about this many characters (UTF-16 code units). */
export const PIECE_CHARS = 64 * 1024;
/**
 * Pieces written between two turns of the event loop: one for a big folder (heavy work, see
 * http/heavy.ts), 8 (about 512 KiB, a few milliseconds) for the others.
 */
const PIECES_PER_TURN = { heavy: 1, other: 8 };

const coveringFor = (locks: DavLock[], place: string) =>
  locks.filter(
    (l) => l.path === place || (l.depth === 'infinity' && (l.path === '/' || place.startsWith(l.path + '/'))),
  );

/** PROPFIND with Depth 0 or 1; infinity is refused (RFC 4918 9.1, propfind-finite-depth). */
export async function handlePropfind(dav: DavRequest) {
  const depth = (header(dav, 'depth') ?? 'infinity').toLowerCase();
  if (depth !== '0' && depth !== '1') {
    if (depth === 'infinity')
      throw new DavError('forbidden', '<D:propfind-finite-depth/>', 'Depth infinity is not supported');
    throw badRequest('Depth must be 0, 1 or infinity');
  }
  const q = queryOf(parseXml(await readBody(dav.request, 'PROPFIND')));
  const r = await dav.access.open(dav.virtual);
  try {
    if (!r.stat || !r.node) throw notFound();
    const st = await r.node.statNs();
    const place = davPlace(dav, r);
    const isDir = st.isDirectory();
    const self: Entry = {
      href: escapeXml(hrefOf(dav.prefix, r.virtual, isDir)),
      name: nameOf(r.virtual),
      place,
      isDir,
      size: Number(st.size),
      mtimeSec: Number(st.mtimeNs / GIGA),
      mtimeNsec: Number(st.mtimeNs % GIGA),
      birthSec: Number(st.birthtimeNs / GIGA),
      birthNsec: Number(st.birthtimeNs % GIGA),
    };
    let members = Members.none;
    let dirHref = '';
    let placePrefix = '';
    let perTurn = PIECES_PER_TURN.other;
    if (depth === '1' && self.isDir) {
      // A big folder's members wait for their user's turn of heavy work (http/heavy.ts).
      if (isBigFolder(st)) {
        await heavyTurn(dav.ctx, dav.request, dav.reply);
        perTurn = PIECES_PER_TURN.heavy;
      }
      members = Members.of(
        await listDirectoryEntries(dav.access, r.node, r.virtual, {
          readHeader: false,
          sorting: dav.access.sorting,
        }),
      );
      dirHref = hrefOf(dav.prefix, r.virtual, true);
      placePrefix = place === '/' ? '/' : place + '/';
    }
    const memberAt = (i: number): Entry => {
      const name = members.name(i);
      const isDir = members.isDir(i);
      return {
        href: escapeXml(dirHref + encodeURIComponent(name) + (isDir ? '/' : '')),
        name,
        place: placePrefix + name,
        isDir,
        size: members.size(i),
        mtimeSec: members.mtimeSec(i),
        mtimeNsec: members.mtimeNsec(i),
        birthSec: 0,
        birthNsec: 0,
      };
    };
    const wantsDead = q.kind !== 'prop' || q.names.some((n) => n.ns !== DAV || !isLive(n.name));
    const wantsLocks =
      q.kind === 'allprop' ||
      (q.kind === 'prop' && q.names.some((n) => n.ns === DAV && n.name === 'lockdiscovery'));
    const rootId = dav.access.root.id;
    const dead = wantsDead
      ? await dav.ctx.store.davProps.listWithin(rootId, place, members.length > 0)
      : new Map<string, DeadProp[]>();
    const locks = wantsLocks ? await dav.ctx.store.davLocks.related(rootId, place) : [];
    const none: DeadProp[] = [];
    const render = (e: Entry) =>
      responseOf(
        dav,
        e,
        q,
        dead.size === 0 ? none : (dead.get(e.place) ?? none),
        locks.length === 0 ? locks : coveringFor(locks, e.place),
      );
    // Written in pieces of about PIECE_CHARS, each made from the members when the socket wants
    // more (the stream holds one piece, the socket's buffer about one more): a 10,000-entry answer
    // (7 MB) never sits whole in memory, and what a piece is made of dies young. A client reading
    // fast takes piece after piece without the event loop turning, so other requests get a turn
    // every few pieces: a 100,000-entry answer (72 MB) kept them waiting for seconds. After every
    // piece only for a big folder: for a 10,000-entry PROPFIND that promoted 2.5 MB to the old
    // generation instead of 0.6 (`test/webdav-propfind-memory.test.ts`; V8 runs some young
    // collections as tasks between turns).
    const body = Readable.from(
      (async function* () {
        let text = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">' + render(self);
        let pieces = 0;
        for (let i = 0; i < members.length; i++) {
          if (text.length >= PIECE_CHARS) {
            yield Buffer.from(text);
            text = '';
            if (++pieces % perTurn === 0) await loopTurn();
          }
          text += render(memberAt(i));
        }
        yield Buffer.from(text + '</D:multistatus>');
      })(),
      { objectMode: false },
    );
    return dav.reply.code(207).type('application/xml; charset=utf-8').send(body);
  } finally {
    await r.close();
  }
}

/** Dead properties one resource may have. */
export const MAX_PROPS_PER_RESOURCE = 100;
/** Bytes (as stored, UTF-8) of all the dead properties of one resource. */
export const MAX_PROP_BYTES_PER_RESOURCE = 64 * 1024;
const sizeKiB = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

/**
 * Whether a PROPPATCH's changes fit: the resource's count and bytes, the user's bytes, and the
 * quota of the scope the resource is in (its properties count against it, files/quota.ts). On
 * success the quota is held until `done` (the records count once they are written); a refusal is
 * the reason, in words.
 */
async function roomFor(
  dav: DavRequest,
  r: Opened,
  place: string,
  changes: Array<{ ns: string; name: string; xml?: string }>,
): Promise<{ done(): Promise<void> } | { refused: string }> {
  const { davProps } = dav.ctx.store;
  const rootId = dav.access.root.id;
  const key = (ns: string, name: string) => `${ns}\u0000${name}`;
  const before = await davProps.rowsAt(rootId, place);
  const after = new Map(before.map((p) => [key(p.ns, p.name), { userId: p.userId, bytes: p.bytes }]));
  for (const c of changes) {
    if (c.xml === undefined) after.delete(key(c.ns, c.name));
    else after.set(key(c.ns, c.name), { userId: dav.user.id, bytes: Buffer.byteLength(c.xml) });
  }
  const sum = (rows: Iterable<{ bytes: number }>) => [...rows].reduce((n, p) => n + p.bytes, 0);
  const bytesAfter = sum(after.values());
  if (after.size > before.length && after.size > MAX_PROPS_PER_RESOURCE) {
    return { refused: `a resource may have at most ${MAX_PROPS_PER_RESOURCE} properties` };
  }
  const bytesBefore = sum(before);
  if (bytesAfter > bytesBefore && bytesAfter > MAX_PROP_BYTES_PER_RESOURCE) {
    return {
      refused: `the properties of a resource may hold at most ${sizeKiB(MAX_PROP_BYTES_PER_RESOURCE)}`,
    };
  }
  const mine = (rows: Iterable<{ userId: number; bytes: number }>) =>
    sum([...rows].filter((p) => p.userId === dav.user.id));
  const growth = Math.max(0, mine(after.values()) - mine(before));
  const release = await propHoldsOf(dav.ctx).hold(
    dav.user.id,
    () => davProps.bytesOfUser(dav.user.id),
    growth,
  );
  if (!release) {
    return {
      refused: `the properties you set may hold at most ${sizeKiB(MAX_PROP_BYTES_PER_USER)} in all: remove some first`,
    };
  }
  try {
    const hold = await dav.access.quota.reserve(dav.access, r.entry, bytesAfter - bytesBefore);
    // Once written, the records count (the quota reads them): the holds only covered the wait.
    return {
      done: async () => {
        hold.release();
        await release();
      },
    };
  } catch (err) {
    await release();
    if (err instanceof AppError && err.kind === 'insufficient_storage') return { refused: err.message };
    throw err;
  }
}

/**
 * PROPPATCH: sets and removes dead properties, all or nothing; live ones are protected (403).
 * Properties that do not fit (see `roomFor`) answer 507 Insufficient Storage, the others 424
 * Failed Dependency (RFC 4918 9.2), with the reason as the response description; nothing changes.
 */
export async function handleProppatch(dav: DavRequest) {
  const doc = parseXml(await readBody(dav.request, 'PROPPATCH'));
  const root = doc?.documentElement;
  if (!root || !isDav(root, 'propertyupdate'))
    throw badRequest('a PROPPATCH body must be a DAV:propertyupdate');
  const r = await dav.access.open(dav.virtual);
  try {
    if (!r.linkStat) throw notFound();
    assertMay(dav.access.perm, 'modify');
    const place = davPlace(dav, r);
    await dav.access.locks.assertWritable(dav.access, r);
    const ops: Array<{ set: boolean; el: Element }> = [];
    for (const action of childElements(root)) {
      const set = isDav(action, 'set');
      if (!set && !isDav(action, 'remove')) continue;
      const prop = davChild(action, 'prop');
      if (prop) for (const el of childElements(prop)) ops.push({ set, el });
    }
    const refused = ops.filter(({ el }) => el.namespaceURI === DAV && isLive(el.localName ?? ''));
    const names = ops.map(({ el }) => emptyElement(el.namespaceURI ?? '', el.localName ?? ''));
    /** The names whose ops pass `which` with `status`, the others failed by them (424). */
    const failed = (which: (op: { set: boolean; el: Element }) => boolean, status: string) =>
      propstat(names.filter((_, i) => which(ops[i]!)).join(''), status) +
      propstat(names.filter((_, i) => !which(ops[i]!)).join(''), '424 Failed Dependency');
    let body: string;
    if (refused.length > 0) {
      const refusedNames = new Set(refused.map(({ el }) => el));
      body = failed(({ el }) => refusedNames.has(el), '403 Forbidden');
    } else {
      const changes = ops.map(({ set, el }) => ({
        ns: el.namespaceURI ?? '',
        name: el.localName ?? '',
        ...(set && { xml: serializeXml(el) }),
      }));
      const room = await roomFor(dav, r, place, changes);
      if ('refused' in room) {
        body =
          failed(({ set }) => set, '507 Insufficient Storage') +
          `<D:responsedescription>${escapeXml(room.refused)}</D:responsedescription>`;
      } else {
        try {
          await dav.ctx.store.davProps.patch(dav.access.root.id, place, changes, dav.user.id);
        } finally {
          await room.done();
        }
        body = propstat(names.join(''), '200 OK');
      }
    }
    const href = `<D:href>${escapeXml(hrefOf(dav.prefix, r.virtual, !!r.stat?.isDirectory()))}</D:href>`;
    return dav.reply
      .code(207)
      .type('application/xml; charset=utf-8')
      .send(
        `<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:"><D:response>${href}${body}</D:response></D:multistatus>`,
      );
  } finally {
    await r.close();
  }
}
