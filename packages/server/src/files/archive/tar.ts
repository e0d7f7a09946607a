import type { ArchiveEntry } from './entries.js';
import { readExactly } from './entries.js';

const BLOCK = 512;

function writeString(buf: Buffer, offset: number, length: number, value: string): void {
  buf.write(value, offset, Math.min(length, Buffer.byteLength(value)), 'utf8');
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  // length-1 octal digits, then NUL.
  buf.write(
    Math.floor(value)
      .toString(8)
      .padStart(length - 1, '0')
      .slice(-(length - 1)) + '\0',
    offset,
    length,
    'ascii',
  );
}

/** One PAX extended-header record: "<len> key=value\n", where len counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function header(
  name: string,
  opts: { size: number; mode: number; mtime: number; type: '0' | '5' | 'x' },
): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, name);
  writeOctal(h, 100, 8, opts.mode & 0o7777);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, opts.size);
  writeOctal(h, 136, 12, Math.max(0, opts.mtime));
  h.fill(0x20, 148, 156); // checksum field counts as spaces while summing
  h.write(opts.type, 156, 1, 'ascii');
  h.write('ustar\0' + '00', 257, 8, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

const USTAR_MAX_SIZE = 8 ** 11 - 1;

/** The header blocks of an entry: a PAX header first when the name or size does not fit ustar. */
function entryHeaders(entry: ArchiveEntry): Buffer[] {
  const name = entry.isDir ? entry.name + '/' : entry.name;
  const size = entry.isDir ? 0 : entry.size;
  const mtime = Math.floor(entry.mtimeMs / 1000);
  const records: string[] = [];
  if (Buffer.byteLength(name) > 100 || /[^\x20-\x7e]/.test(name)) records.push(paxRecord('path', name));
  if (size > USTAR_MAX_SIZE) records.push(paxRecord('size', String(size)));
  const out: Buffer[] = [];
  if (records.length > 0) {
    const data = Buffer.from(records.join(''), 'utf8');
    out.push(header('PaxHeader', { size: data.length, mode: 0o644, mtime, type: 'x' }));
    out.push(data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  const ascii = name.replace(/[^\x20-\x7e]/g, '_');
  out.push(
    header(ascii.length > 100 ? ascii.slice(0, 100) : ascii, {
      size: Math.min(size, USTAR_MAX_SIZE),
      mode: entry.mode,
      mtime,
      type: entry.isDir ? '5' : '0',
    }),
  );
  return out;
}

/**
 * A streamed POSIX tar (ustar with PAX extensions for long or non-ASCII names and large files).
 * Each file contributes exactly the size recorded in its header, even if it changes meanwhile.
 */
export async function* tarStream(entries: AsyncIterable<ArchiveEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    yield Buffer.concat(entryHeaders(entry));
    if (entry.isDir || entry.size === 0) continue;
    yield* readExactly(entry);
    const rest = entry.size % BLOCK;
    if (rest) yield Buffer.alloc(BLOCK - rest);
  }
  yield Buffer.alloc(BLOCK * 2);
}
