import { createRequire } from 'node:module';
import type * as XmlDomModule from '@xmldom/xmldom';
import type { Document, Element } from '@xmldom/xmldom';
import type { FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../../errors.js';

type XmlDom = typeof XmlDomModule;
let loaded: XmlDom | undefined;
/**
 * The XML library is loaded by the first WebDAV request that carries XML, not at start: it is
 * about 1 MB of code and strings that a server whose users never mount it would hold for nothing.
 */
function xmldom(): XmlDom {
  loaded ??= createRequire(import.meta.url)('@xmldom/xmldom') as XmlDom;
  return loaded;
}

/** An element and what it contains, as XML text. */
export function serializeXml(el: Element): string {
  return new (xmldom().XMLSerializer)().serializeToString(el);
}

/** The DAV: namespace of RFC 4918. */
export const DAV = 'DAV:';

/** Request bodies of PROPFIND, PROPPATCH and LOCK are small documents: anything larger is refused. */
export const MAX_XML_BODY = 1024 * 1024;

/**
 * An answer whose body is a DAV:error document (RFC 4918 16): a precondition or postcondition
 * code a client can act on, such as `lock-token-submitted` or `propfind-finite-depth`.
 */
export class DavError extends AppError {
  constructor(
    kind: ConstructorParameters<typeof AppError>[0],
    readonly condition: string,
    message = '',
  ) {
    super(kind, message);
  }

  body(): string {
    return `<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:">${this.condition}</D:error>`;
  }
}

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/** Escapes text for XML; characters XML 1.0 cannot carry at all (control codes in a file name) become U+FFFD. */
export function escapeXml(text: string): string {
  // Most names need nothing: one test instead of two replacing passes (PROPFIND escapes every name).
  if (!NEEDS_ESCAPE.test(text)) return text;
  return (
    text
      .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
  );
}

/** Whether the request carries a body (a length above zero, or chunks). */
export function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return request.headers['transfer-encoding'] !== undefined;
}

/** Reads a whole small request body, refusing (413) one over `limit` before buffering it. */
export async function readBody(request: FastifyRequest, limit = MAX_XML_BODY): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) throw new AppError('payload_too_large', 'the XML body is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  // Left early (a body over the limit), the request stays whole: its answer still reaches the client.
  for await (const chunk of request.raw.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new AppError('payload_too_large', 'the XML body is too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a request body as XML; undefined for an empty body. Document type declarations are
 * refused outright (400): WebDAV never needs them, and they are what entity-expansion bombs and
 * external entities are made of.
 */
export function parseXml(body: Buffer): Document | undefined {
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '') return undefined;
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badRequest('XML with a document type declaration is refused');
  let doc: Document;
  try {
    doc = new (xmldom().DOMParser)({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(text, 'application/xml');
  } catch {
    throw badRequest('the body is not well-formed XML');
  }
  if (!doc.documentElement) throw badRequest('the body is not well-formed XML');
  return doc;
}

/** The element children of an element. */
export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

/** Whether an element is `DAV:name`. */
export function isDav(el: Element, name: string): boolean {
  return el.namespaceURI === DAV && el.localName === name;
}

/** The first child `DAV:name` of an element. */
export function davChild(el: Element, name: string): Element | undefined {
  return childElements(el).find((c) => isDav(c, name));
}

/** An empty element named by namespace and local name, with its namespace declared on itself. */
export function emptyElement(ns: string, name: string): string {
  if (ns === DAV) return `<D:${name}/>`;
  return ns ? `<X:${name} xmlns:X="${escapeXml(ns)}"/>` : `<${name} xmlns=""/>`;
}
