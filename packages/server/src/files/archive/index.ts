import { shortLivedBuffer } from '../../buffer-garbage.js';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, type Duplex } from 'node:stream';
import zlib from 'node:zlib';
import { ARCHIVE_FORMATS, type ArchiveFormat } from '@filebrowser/contract';
import { badRequest } from '../../errors.js';
import type { ArchiveEntry } from './entries.js';
import { BlockGzip } from './gzip-blocks.js';
import { createSnappyFramer } from './snappy.js';
import { tarStream } from './tar.js';
import { zipStream } from './zip.js';

export { parseFilesParam, planArchive, type ArchiveEntry } from './entries.js';

/** System compressors used for formats Node has no encoder for (pure-JS bzip2 is far too slow). */
const TOOLS: Partial<Record<ArchiveFormat, { bin: string; args: string[] }>> = {
  tarbz2: { bin: 'bzip2', args: ['-c', '-z'] },
  tarxz: { bin: 'xz', args: ['-c', '-z', '-T1'] },
  tarlz4: { bin: 'lz4', args: ['-c', '-z', '-q'] },
  tarzst: { bin: 'zstd', args: ['-c', '-q', '-T1'] },
};

const found = new Map<string, string | undefined>();

/** Absolute path of an executable on the PATH, looked up once. */
function which(bin: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  if (found.has(bin)) return found.get(bin);
  let hit: string | undefined;
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, bin);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      hit = candidate;
      break;
    } catch {
      // not here
    }
  }
  found.set(bin, hit);
  return hit;
}

/** The `algo` values this server can produce, in the contract's order (advertised at start-up). */
export function availableArchiveFormats(): ArchiveFormat[] {
  return (Object.keys(ARCHIVE_FORMATS) as ArchiveFormat[]).filter((f) => {
    const tool = TOOLS[f];
    return !tool || which(tool.bin) !== undefined;
  });
}

/** Maps the `algo` query value (`zip` also for `true`, empty or absent) to a format, or 400. */
export function archiveFormatOf(algo: string | undefined): ArchiveFormat {
  const value = algo === undefined || algo === '' || algo === 'true' ? 'zip' : algo;
  if (!Object.hasOwn(ARCHIVE_FORMATS, value)) throw badRequest(`format not implemented: ${value}`);
  const format = value as ArchiveFormat;
  if (!availableArchiveFormats().includes(format)) {
    throw badRequest(`format not available on this server: ${value} (its compressor is not installed)`);
  }
  return format;
}

export interface ArchiveStream {
  stream: Readable;
  contentType: string;
  /** Stops the producer (and a compressor process) when the client goes away. */
  abort(): void;
  /** Settles once the producer has ended and let go of every file and folder it held. */
  released: Promise<void>;
}

const CONTENT_TYPES: Record<ArchiveFormat, string> = {
  zip: 'application/zip',
  tar: 'application/x-tar',
  targz: 'application/gzip',
  tarbz2: 'application/x-bzip2',
  tarxz: 'application/x-xz',
  tarlz4: 'application/x-lz4',
  tarsz: 'application/x-snappy-framed',
  tarbr: 'application/x-brotli',
  tarzst: 'application/zstd',
};

/**
 * Bytes produced ahead of the client: reading the next members overlaps sending (or compressing)
 * the ones before, instead of starting only once the socket has taken everything.
 */
const READ_AHEAD = 1024 * 1024;
/** Headers and small files are joined into pieces of this size: one stream step and one socket write for many. */
const PIECE = 64 * 1024;

/** Joins runs of small buffers into pieces of about `size` bytes; larger ones pass through as they are. */
export async function* coalesce(source: AsyncIterable<Buffer>, size = PIECE): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const buf of source) {
    shortLivedBuffer(buf.length);
    if (buf.length < size) {
      held.push(buf);
      heldBytes += buf.length;
      if (heldBytes < size) continue;
    }
    if (heldBytes > 0) {
      yield held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, heldBytes);
      held = [];
      heldBytes = 0;
    }
    if (buf.length >= size) yield buf;
  }
  if (heldBytes > 0) yield Buffer.concat(held, heldBytes);
}

/**
 * The archive as a stream pulled by the client: nothing is built in memory or in a temporary
 * file; a slow reader slows the walk down through back-pressure.
 */
export function archiveStream(format: ArchiveFormat, entries: AsyncIterable<ArchiveEntry>): ArchiveStream {
  const source = Readable.from(coalesce(format === 'zip' ? zipStream(entries) : tarStream(entries)), {
    objectMode: false,
    highWaterMark: READ_AHEAD,
  });
  const contentType = CONTENT_TYPES[format];
  // Readable.from closes only after the generators' `finally` blocks (which close files) have run.
  const released = new Promise<void>((resolve) => source.once('close', () => resolve()));
  let compressor: Duplex | undefined;
  switch (format) {
    case 'zip':
    case 'tar':
      return { stream: source, contentType, abort: () => source.destroy(), released };
    case 'targz':
      compressor = new BlockGzip(6);
      break;
    case 'tarbr':
      compressor = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
      break;
    case 'tarsz':
      compressor = createSnappyFramer();
      break;
    default: {
      const tool = TOOLS[format];
      const bin = tool && which(tool.bin);
      if (!tool || !bin) throw badRequest(`format not available on this server: ${format}`);
      const child = spawn(bin, tool.args, { stdio: ['pipe', 'pipe', 'ignore'] });
      source.on('error', (err) => {
        child.kill('SIGKILL');
        // Fail the response rather than end a truncated archive that looks complete.
        child.stdout.destroy(err);
      });
      child.stdin.on('error', () => source.destroy());
      source.pipe(child.stdin);
      return {
        stream: child.stdout,
        contentType,
        abort: () => {
          source.destroy();
          child.kill('SIGKILL');
        },
        released,
      };
    }
  }
  const out = compressor;
  source.on('error', (err) => out.destroy(err));
  source.pipe(out);
  return {
    stream: out as unknown as Readable,
    contentType,
    abort: () => {
      source.destroy();
      out.destroy();
    },
    released,
  };
}
