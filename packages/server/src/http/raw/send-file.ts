import crypto from 'node:crypto';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type fsp from 'node:fs/promises';
import { etagOf } from '../../files/listing/go-format.js';
import { mimeByExtension, sniff } from '../../files/listing/mime.js';
import { recordBeforeHijack } from '../../audit/http.js';
import { logRequest } from '../access-log.js';
import { fileSafetyHeaders, inertType } from '../file-safety.js';
import { headerValue } from '../resources/request-path.js';
import { STREAM_CHUNK, writeFileRange } from './file-body.js';

/** RFC 5987 `attr-char`s stay; everything else is percent-encoded (UTF-8). */
export function rfc5987(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
  );
}

export function contentDisposition(name: string, inline: boolean): string {
  return `${inline ? 'inline' : 'attachment'}; filename*=utf-8''${rfc5987(name)}`;
}

/** File bytes' safety headers (see `fileSafetyHeaders`), and no shared caching of them. */
export function fileSecurityHeaders(reply: FastifyReply, type: string): void {
  fileSafetyHeaders(reply, type);
  void reply.header('Cache-Control', 'private');
}

interface ByteRange {
  start: number;
  end: number;
}

/** Parses a Range header as Go's http.ServeContent does; 'invalid' answers 416, undefined serves all. */
export function parseRange(header: string, size: number): ByteRange[] | 'invalid' | undefined {
  if (!header.startsWith('bytes=')) return 'invalid';
  const ranges: ByteRange[] = [];
  let noOverlap = false;
  for (const raw of header.slice(6).split(',')) {
    const spec = raw.trim();
    if (spec === '') continue;
    const dash = spec.indexOf('-');
    if (dash < 0) return 'invalid';
    const startText = spec.slice(0, dash).trim();
    const endText = spec.slice(dash + 1).trim();
    if (startText === '') {
      if (!/^\d+$/.test(endText)) return 'invalid';
      let n = Number(endText);
      if (n === 0) {
        noOverlap = true;
        continue;
      }
      if (n > size) n = size;
      ranges.push({ start: size - n, end: size - 1 });
      continue;
    }
    if (!/^\d+$/.test(startText)) return 'invalid';
    const start = Number(startText);
    if (start >= size) {
      noOverlap = true;
      continue;
    }
    let end = size - 1;
    if (endText !== '') {
      if (!/^\d+$/.test(endText)) return 'invalid';
      end = Math.min(Number(endText), size - 1);
      if (start > Number(endText)) return 'invalid';
    }
    ranges.push({ start, end });
  }
  if (ranges.length === 0) return noOverlap ? 'invalid' : undefined;
  const total = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
  // Asking for more than the whole file: send the whole file.
  if (total > size) return undefined;
  return ranges;
}

function httpDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toUTCString();
}

function parseDate(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

function etagMatches(header: string, etag: string, weak: boolean): boolean {
  if (header.trim() === '*') return true;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => (weak ? strip(t) === strip(etag) : t.trim() === etag));
}

export interface SendFileOptions {
  /** Name for Content-Disposition. */
  name: string;
  inline: boolean;
  /** Fixed Content-Type (subtitles: text/vtt); otherwise by extension, then sniffed, for inline. */
  contentType?: string;
}

/** What `sendBody` serves: its validators and a way to read any byte range of it. */
export interface BodySource {
  size: number;
  mtimeMs: number;
  etag: string;
  /** Bytes `start` to `end` inclusive. */
  range(start: number, end: number): Readable;
  /**
   * Writes bytes `start` to `end` inclusive straight to the response, faster than `range` (see
   * `writeFileRange`); the response is then the caller's, outside Fastify's reply.
   */
  write?(res: ServerResponse, start: number, end: number): Promise<void>;
}

export interface SendBodyOptions {
  name: string;
  inline: boolean;
  /** The Content-Type of the bytes (sent when inline, or always when `forceType`). */
  contentType: string;
  /** Send `contentType` even for an attachment (subtitles are always text/vtt). */
  forceType?: boolean;
}

/** The first bytes of an open file, for sniffing its type. */
async function headOf(fh: fsp.FileHandle): Promise<Buffer> {
  const buf = Buffer.alloc(512);
  const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
  return buf.subarray(0, bytesRead);
}

/**
 * The one helper that streams a file: Range (single and multipart), If-Range, conditional
 * requests, ETag, Last-Modified, an RFC 5987 file name, and the safety headers of raw files.
 * It takes over the open file `fh` (opened through the caller's file access) and closes it.
 */
export async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  fh: fsp.FileHandle,
  opts: SendFileOptions,
): Promise<FastifyReply> {
  let handedOver = false;
  try {
    const st = await fh.stat({ bigint: true });
    let type = opts.contentType;
    if (!type && opts.inline) type = mimeByExtension(opts.name) || sniff(await headOf(fh));
    const source: BodySource = {
      size: Number(st.size),
      mtimeMs: Number(st.mtimeNs / 1_000_000n),
      etag: etagOf(st),
      range: (start, end) =>
        fh.createReadStream({ start, end, autoClose: false, highWaterMark: STREAM_CHUNK }),
      write: async (res, start, end) => {
        handedOver = true;
        try {
          await writeFileRange(res, fh, start, end);
        } finally {
          await fh.close().catch(() => undefined);
        }
      },
    };
    return await sendBody(
      request,
      reply,
      source,
      {
        name: opts.name,
        inline: opts.inline,
        contentType: type || 'application/octet-stream',
        forceType: opts.contentType !== undefined,
      },
      (body) => {
        handedOver = true;
        // The ranges share one handle (autoClose off), so a finished stream does not close it:
        // whichever comes first of end, error and close releases it, once.
        let closed = false;
        const release = () => {
          if (closed) return;
          closed = true;
          void fh.close().catch(() => undefined);
        };
        body.once('end', release).once('error', release).once('close', release);
      },
    );
  } finally {
    if (!handedOver) await fh.close().catch(() => undefined);
  }
}

/**
 * Takes the response out of Fastify's hands (every header is set by now) and lets `write` send
 * the body. A failure after the headers went out can only cut the connection, as a failing
 * stream would.
 */
async function writeDirectly(
  request: FastifyRequest,
  reply: FastifyReply,
  write: (res: ServerResponse) => Promise<void>,
): Promise<FastifyReply> {
  // Recorded as the answer starts (its status is set): hijacked replies skip the audit's hook.
  recordBeforeHijack(request, reply);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(reply.statusCode, reply.getHeaders() as OutgoingHttpHeaders);
  try {
    // A HEAD answer is the GET's headers alone: nothing to read (Node would drop the bytes).
    if (request.method === 'HEAD') res.end();
    else await write(res);
  } catch (err) {
    if (!isGone(err)) request.log.warn({ err }, 'sending a file failed');
  }
  // The access log is written in a hook that a hijacked reply skips.
  logRequest(request, reply);
  return reply;
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return (
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ERR_STREAM_DESTROYED' ||
    (err as Error).message === 'the client went away'
  );
}

/** Serves bytes held in memory (a generated preview, a converted subtitle) like a file. */
export function sendBuffer(
  request: FastifyRequest,
  reply: FastifyReply,
  data: Buffer,
  validators: { mtimeMs: number; etag: string },
  opts: SendBodyOptions,
): Promise<FastifyReply> {
  const source: BodySource = {
    size: data.length,
    ...validators,
    range: (start, end) => Readable.from([data.subarray(start, end + 1)]),
  };
  return sendBody(request, reply, source, opts);
}

/**
 * Headers, preconditions and ranges over any body source. `onBody` is told about the stream that
 * was handed to the reply, so a caller can release what the stream reads from when it closes.
 */
export async function sendBody(
  request: FastifyRequest,
  reply: FastifyReply,
  source: BodySource,
  opts: SendBodyOptions,
  onBody: (body: Readable) => void = () => undefined,
): Promise<FastifyReply> {
  const { size, mtimeMs, etag } = source;
  const type = opts.inline || opts.forceType ? inertType(opts.contentType) : 'application/octet-stream';
  fileSecurityHeaders(reply, type);
  void reply.header('Content-Disposition', contentDisposition(opts.name, opts.inline));
  void reply.header('Accept-Ranges', 'bytes');
  void reply.header('Last-Modified', httpDate(mtimeMs));
  void reply.header('ETag', etag);

  // Preconditions, in RFC 9110 order.
  const ifMatch = headerValue(request, 'if-match');
  const ifUnmodified = parseDate(headerValue(request, 'if-unmodified-since'));
  if (
    ifMatch
      ? !etagMatches(ifMatch, etag, false)
      : ifUnmodified !== undefined && Math.floor(mtimeMs / 1000) * 1000 > ifUnmodified
  ) {
    return reply.code(412).send();
  }
  const ifNoneMatch = headerValue(request, 'if-none-match');
  const ifModified = parseDate(headerValue(request, 'if-modified-since'));
  if (
    ifNoneMatch
      ? etagMatches(ifNoneMatch, etag, true)
      : ifModified !== undefined && Math.floor(mtimeMs / 1000) * 1000 <= ifModified
  ) {
    return reply.code(304).send();
  }

  let ranges: ReturnType<typeof parseRange>;
  const rangeHeader = headerValue(request, 'range');
  if (rangeHeader) {
    const ifRange = headerValue(request, 'if-range');
    const rangeApplies =
      !ifRange ||
      (ifRange.trim().startsWith('"') || ifRange.trim().startsWith('W/')
        ? ifRange.trim() === etag
        : parseDate(ifRange) === Math.floor(mtimeMs / 1000) * 1000);
    if (rangeApplies) ranges = parseRange(rangeHeader, size);
  }
  if (ranges === 'invalid') {
    void reply.header('Content-Range', `bytes */${size}`);
    return reply.code(416).type('text/plain; charset=utf-8').send('416 Requested Range Not Satisfiable\n');
  }
  const handOver = (body: Readable) => {
    onBody(body);
    return body;
  };

  if (!ranges || ranges.length === 1) {
    const r = ranges?.[0] ?? { start: 0, end: size - 1 };
    if (ranges) void reply.header('Content-Range', `bytes ${r.start}-${r.end}/${size}`);
    void reply.header('Content-Length', String(r.end - r.start + 1));
    void reply.code(ranges ? 206 : 200).type(type);
    if (r.end < r.start) return reply.send(handOver(Readable.from([])));
    if (source.write) return writeDirectly(request, reply, (res) => source.write!(res, r.start, r.end));
    return reply.send(handOver(source.range(r.start, r.end)));
  }
  const boundary = crypto.randomBytes(16).toString('hex');
  const partHead = (r: ByteRange, first: boolean) =>
    `${first ? '' : '\r\n'}--${boundary}\r\nContent-Type: ${type}\r\nContent-Range: bytes ${r.start}-${r.end}/${size}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  let length = Buffer.byteLength(tail);
  ranges.forEach((r, i) => (length += Buffer.byteLength(partHead(r, i === 0)) + r.end - r.start + 1));
  const parts = ranges;
  async function* multipart(): AsyncGenerator<Buffer | string> {
    for (const [i, r] of parts.entries()) {
      yield partHead(r, i === 0);
      yield* source.range(r.start, r.end);
    }
    yield tail;
  }
  void reply.header('Content-Length', String(length));
  return reply
    .code(206)
    .type(`multipart/byteranges; boundary=${boundary}`)
    .send(handOver(Readable.from(multipart())));
}
