import type fs from 'node:fs';
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { assertMay } from '../../auth/policy.js';
import { badRequest, notFound } from '../../errors.js';
import { etagOf, listDirectory } from '../../files/info.js';
import { mimeByExtension } from '../../files/mime.js';
import { joinVirtual } from '../../files/resolver.js';
import type { DavLock, DeadProp } from '../../store/dav.js';
import { activeLock, guardWrite, davPlace, SUPPORTED_LOCK } from './locks.js';
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
} from './xml.js';

/** What PROPFIND reports of one resource. */
interface Entry {
  virtual: string;
  place: string;
  isDir: boolean;
  size: bigint;
  mtimeNs: bigint;
  birthNs: bigint;
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

/** The value of a live property, or undefined when the resource has none (a folder's length). */
function liveValue(dav: DavRequest, e: Entry, name: Live, locks: DavLock[]): string | undefined {
  switch (name) {
    case 'resourcetype':
      return e.isDir ? '<D:collection/>' : '';
    case 'displayname':
      return escapeXml(nameOf(e.virtual));
    case 'getcontentlength':
      return e.isDir ? undefined : String(e.size);
    case 'getcontenttype':
      return e.isDir
        ? undefined
        : escapeXml(mimeByExtension(nameOf(e.virtual)) || 'application/octet-stream');
    case 'getetag':
      return e.isDir ? undefined : escapeXml(etagOf({ mtimeNs: e.mtimeNs, size: e.size } as fs.BigIntStats));
    case 'getlastmodified':
      return new Date(Number(e.mtimeNs / 1_000_000n)).toUTCString();
    case 'creationdate':
      return new Date(Number((e.birthNs || e.mtimeNs) / 1_000_000n)).toISOString().replace(/\.\d+Z$/, 'Z');
    case 'lockdiscovery':
      return locks.map((l) => activeLock(dav, l)).join('');
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

function propstat(props: string[], status: string): string {
  if (props.length === 0) return '';
  return `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${status}</D:status></D:propstat>`;
}

const liveElement = (name: string, value: string) =>
  value === '' ? `<D:${name}/>` : `<D:${name}>${value}</D:${name}>`;

function responseOf(dav: DavRequest, e: Entry, q: Query, dead: DeadProp[], locks: DavLock[]): string {
  const href = `<D:href>${escapeXml(hrefOf(dav.prefix, e.virtual, e.isDir))}</D:href>`;
  const found: string[] = [];
  const missing: string[] = [];
  if (q.kind === 'prop') {
    for (const { ns, name } of q.names) {
      const value = ns === DAV && isLive(name) ? liveValue(dav, e, name, locks) : undefined;
      if (value !== undefined) {
        found.push(liveElement(name, value));
        continue;
      }
      const d = dead.find((p) => p.ns === ns && p.name === name);
      if (d) found.push(d.xml);
      else missing.push(emptyElement(ns, name));
    }
  } else {
    for (const name of LIVE) {
      const value = liveValue(dav, e, name, locks);
      if (value !== undefined) found.push(q.kind === 'propname' ? `<D:${name}/>` : liveElement(name, value));
    }
    for (const d of dead) found.push(q.kind === 'propname' ? emptyElement(d.ns, d.name) : d.xml);
  }
  return `<D:response>${href}${propstat(found, '200 OK')}${propstat(missing, '404 Not Found')}</D:response>`;
}

const coveringFor = (locks: DavLock[], place: string) =>
  locks.filter(
    (l) => l.path === place || (l.depth === 'infinity' && (l.path === '/' || place.startsWith(l.path + '/'))),
  );

/** Parses a Go-style RFC 3339 time with nanoseconds (listing entries carry those) into nanoseconds. */
function nsOf(goTime: string): bigint {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(goTime);
  if (!m) return BigInt(Date.parse(goTime) || 0) * 1_000_000n;
  return BigInt(Date.parse(m[1]! + m[3]!)) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** PROPFIND with Depth 0 or 1; infinity is refused (RFC 4918 9.1, propfind-finite-depth). */
export async function handlePropfind(dav: DavRequest) {
  const depth = (header(dav, 'depth') ?? 'infinity').toLowerCase();
  if (depth !== '0' && depth !== '1') {
    if (depth === 'infinity')
      throw new DavError('forbidden', '<D:propfind-finite-depth/>', 'Depth infinity is not supported');
    throw badRequest('Depth must be 0, 1 or infinity');
  }
  const q = queryOf(parseXml(await readBody(dav.request)));
  const r = await dav.access.open(dav.virtual);
  try {
    if (!r.stat || !r.node) throw notFound();
    const st = await r.node.statNs();
    const place = davPlace(dav, r);
    const self: Entry = {
      virtual: r.virtual,
      place,
      isDir: st.isDirectory(),
      size: st.size,
      mtimeNs: st.mtimeNs,
      birthNs: st.birthtimeNs,
    };
    const entries = [self];
    if (depth === '1' && self.isDir) {
      const listing = await listDirectory(dav.access, r.node, r.virtual, {
        readHeader: false,
        sorting: dav.access.sorting,
      });
      for (const item of listing.items) {
        const ns = nsOf(item.modified);
        entries.push({
          virtual: joinVirtual(r.virtual, item.name),
          place: place === '/' ? '/' + item.name : place + '/' + item.name,
          isDir: item.isDir,
          size: BigInt(item.size),
          mtimeNs: ns,
          birthNs: 0n,
        });
      }
    }
    const wantsDead = q.kind !== 'prop' || q.names.some((n) => n.ns !== DAV || !isLive(n.name));
    const wantsLocks =
      q.kind === 'allprop' ||
      (q.kind === 'prop' && q.names.some((n) => n.ns === DAV && n.name === 'lockdiscovery'));
    const rootId = dav.access.root.id;
    const dead = wantsDead
      ? dav.ctx.store.davProps.listWithin(rootId, place, entries.length > 1)
      : new Map<string, DeadProp[]>();
    const locks = wantsLocks ? dav.ctx.store.davLocks.related(rootId, place) : [];
    const parts = ['<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">'];
    for (const e of entries)
      parts.push(responseOf(dav, e, q, dead.get(e.place) ?? [], coveringFor(locks, e.place)));
    parts.push('</D:multistatus>');
    return dav.reply.code(207).type('application/xml; charset=utf-8').send(parts.join(''));
  } finally {
    await r.close();
  }
}

/** PROPPATCH: sets and removes dead properties, all or nothing; live ones are protected (403). */
export async function handleProppatch(dav: DavRequest) {
  const doc = parseXml(await readBody(dav.request));
  const root = doc?.documentElement;
  if (!root || !isDav(root, 'propertyupdate'))
    throw badRequest('a PROPPATCH body must be a DAV:propertyupdate');
  const r = await dav.access.open(dav.virtual);
  try {
    if (!r.linkStat) throw notFound();
    assertMay(dav.access.perm, 'modify');
    const place = davPlace(dav, r);
    guardWrite(dav, place);
    const serializer = new XMLSerializer();
    const ops: Array<{ set: boolean; el: Element }> = [];
    for (const action of childElements(root)) {
      const set = isDav(action, 'set');
      if (!set && !isDav(action, 'remove')) continue;
      const prop = davChild(action, 'prop');
      if (prop) for (const el of childElements(prop)) ops.push({ set, el });
    }
    const refused = ops.filter(({ el }) => el.namespaceURI === DAV && isLive(el.localName ?? ''));
    const names = ops.map(({ el }) => emptyElement(el.namespaceURI ?? '', el.localName ?? ''));
    let body: string;
    if (refused.length > 0) {
      const refusedNames = new Set(refused.map(({ el }) => el));
      body =
        propstat(
          names.filter((_, i) => refusedNames.has(ops[i]!.el)),
          '403 Forbidden',
        ) +
        propstat(
          names.filter((_, i) => !refusedNames.has(ops[i]!.el)),
          '424 Failed Dependency',
        );
    } else {
      const changes = ops.map(({ set, el }) => ({
        ns: el.namespaceURI ?? '',
        name: el.localName ?? '',
        ...(set && { xml: serializer.serializeToString(el) }),
      }));
      dav.ctx.store.davProps.patch(dav.access.root.id, place, changes);
      body = propstat(names, '200 OK');
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
