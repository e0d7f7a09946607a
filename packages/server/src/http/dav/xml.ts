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

/** How many documents were handed to the XML parser (tests count what a refusal never parsed). */
export const xmlStats = { parsed: 0 };

/** The DAV: namespace of RFC 4918. */
export const DAV = 'DAV:';

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

/**
 * What an XML request body may be, per method: its bytes (413 beyond), how deep its elements
 * nest and how many elements and attributes it holds (400 beyond). A body is scanned for these
 * as it arrives, before the parser sees it, so that the parser and the serialiser after it
 * only ever work on a small, shallow tree: a few milliseconds at most, never a blocked server.
 */
export interface XmlBounds {
  bytes: number;
  depth: number;
  nodes: number;
}

export const XML_BOUNDS = {
  /** A list of property names: clients ask for a few dozen. */
  PROPFIND: { bytes: 16 * 1024, depth: 16, nodes: 1000 },
  /** A lockinfo and its owner (a name or a URL). */
  LOCK: { bytes: 8 * 1024, depth: 16, nodes: 100 },
  /** Twice what one resource's dead properties may hold (props.ts), for the set and remove around them. */
  PROPPATCH: { bytes: 128 * 1024, depth: 32, nodes: 2000 },
} as const satisfies Record<string, XmlBounds>;

export type XmlMethod = keyof typeof XML_BOUNDS;

const kib = (bytes: number) => `${Math.floor(bytes / 1024)} KiB`;

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const BANG = 0x21;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
const RBRACKET = 0x5d;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Counts, byte by byte as the body arrives, how deep elements nest and how many elements and
 * attributes there are, throwing 400 at the first byte past a bound. It reads markup only as far
 * as counting needs: tags, attribute values in quotes, comments, CDATA sections, processing
 * instructions; a declaration (`<!DOCTYPE`, `<!ENTITY`) is refused outright. In UTF-8 the bytes
 * it looks at never occur inside a multi-byte character, so chunks may split characters anywhere.
 * A well-formed document is counted exactly; a malformed one may be counted high, and the parser
 * would refuse it anyway.
 */
export class XmlScan {
  private state: 'text' | 'lt' | 'tag' | 'quote' | 'close' | 'pi' | 'bang' | 'comment' | 'cdata' = 'text';
  private quote = 0;
  /** The last byte that was not white space, inside a start tag (a `/` before `>` closes it). */
  private last = 0;
  /** Bytes of `<!…` seen so far, to tell a comment or CDATA section from a declaration. */
  private bang = '';
  /** The last two bytes, for the ends of comments (`-->`), CDATA (`]]>`) and instructions (`?>`). */
  private prev1 = 0;
  private prev2 = 0;
  depth = 0;
  nodes = 0;

  constructor(private readonly bounds: XmlBounds) {}

  private open(): void {
    this.depth++;
    this.node();
    if (this.depth > this.bounds.depth) {
      throw badRequest(`the XML body is nested deeper than ${this.bounds.depth} elements`);
    }
  }

  private node(): void {
    if (++this.nodes > this.bounds.nodes) {
      throw badRequest(`the XML body has too many elements and attributes: at most ${this.bounds.nodes}`);
    }
  }

  feed(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      switch (this.state) {
        case 'text':
          if (c === LT) this.state = 'lt';
          break;
        case 'lt':
          if (c === SLASH) this.state = 'close';
          else if (c === QUESTION) this.state = 'pi';
          else if (c === BANG) {
            this.state = 'bang';
            this.bang = '';
          } else {
            this.open();
            this.state = 'tag';
            this.last = c;
          }
          break;
        case 'tag':
          if (c === DQUOTE || c === SQUOTE) {
            this.quote = c;
            this.state = 'quote';
          } else if (c === EQUALS) {
            this.node();
          } else if (c === GT) {
            if (this.last === SLASH) this.depth--;
            this.state = 'text';
          }
          if (!isSpace(c)) this.last = c;
          break;
        case 'quote':
          if (c === this.quote) {
            this.state = 'tag';
            this.last = c;
          }
          break;
        case 'close':
          if (c === GT) {
            this.depth--;
            this.state = 'text';
          }
          break;
        case 'pi':
          if (c === GT && this.prev1 === QUESTION) this.state = 'text';
          break;
        case 'bang':
          this.bang += String.fromCharCode(c);
          if (this.bang === '--') this.state = 'comment';
          else if (this.bang === '[CDATA[') this.state = 'cdata';
          else if (!'--'.startsWith(this.bang) && !'[CDATA['.startsWith(this.bang)) {
            throw badRequest('XML with a document type declaration is refused');
          }
          break;
        case 'comment':
          if (c === GT && this.prev1 === DASH && this.prev2 === DASH) this.state = 'text';
          break;
        case 'cdata':
          if (c === GT && this.prev1 === RBRACKET && this.prev2 === RBRACKET) this.state = 'text';
          break;
      }
      this.prev2 = this.prev1;
      this.prev1 = c;
    }
  }
}

/**
 * Reads the XML body of a PROPFIND, PROPPATCH or LOCK within that method's bounds: 413 for a
 * body longer than its bytes (before reading any of it when its length is declared), 400 as soon
 * as what arrived nests too deep or holds too many elements. A refusal leaves the request whole
 * (not destroyed), so that its answer still reaches the client; the rest is never read.
 */
export async function readBody(request: FastifyRequest, method: XmlMethod): Promise<Buffer> {
  const bounds: XmlBounds = XML_BOUNDS[method];
  const tooLarge = () =>
    new AppError('payload_too_large', `the XML body of a ${method} may hold at most ${kib(bounds.bytes)}`);
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > bounds.bytes) throw tooLarge();
  const scan = new XmlScan(bounds);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw.iterator({ destroyOnReturn: false })) {
    const bytes = chunk as Buffer;
    // The first fault in the order of the bytes is the one reported.
    const room = bounds.bytes - size;
    scan.feed(bytes.length <= room ? bytes : bytes.subarray(0, room));
    size += bytes.length;
    if (size > bounds.bytes) throw tooLarge();
    chunks.push(bytes);
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
  xmlStats.parsed++;
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
