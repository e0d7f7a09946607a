import zlib from 'node:zlib';
import type { ArchiveEntry } from './entries.js';
import { readExactly } from './entries.js';

/**
 * A streamed zip: entries stored (no compression, as File Browser does), CRC and sizes in a data
 * descriptor after each entry, Zip64 records only where sizes, offsets or counts need them. Only
 * the central directory (a few dozen bytes per entry) is kept in memory.
 */

const MAX32 = 0xffffffff;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;

interface CentralRecord {
  name: Buffer;
  crc: number;
  size: number;
  offset: number;
  dosTime: number;
  dosDate: number;
  externalAttr: number;
  zip64: boolean;
}

function dosDateTime(ms: number): { time: number; date: number } {
  const d = new Date(ms);
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

function writeU64(buf: Buffer, value: number, offset: number): void {
  buf.writeBigUInt64LE(BigInt(value), offset);
}

function localHeader(r: CentralRecord): Buffer {
  const extra = r.zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
  if (r.zip64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(16, 2); // sizes are zero here: they follow in the descriptor
  }
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(r.zip64 ? 45 : 20, 4);
  h.writeUInt16LE(FLAG_DESCRIPTOR | FLAG_UTF8, 6);
  h.writeUInt16LE(0, 8); // stored
  h.writeUInt16LE(r.dosTime, 10);
  h.writeUInt16LE(r.dosDate, 12);
  h.writeUInt32LE(0, 14);
  h.writeUInt32LE(r.zip64 ? MAX32 : 0, 18);
  h.writeUInt32LE(r.zip64 ? MAX32 : 0, 22);
  h.writeUInt16LE(r.name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, r.name, extra]);
}

function dataDescriptor(r: CentralRecord): Buffer {
  if (r.zip64) {
    const d = Buffer.alloc(24);
    d.writeUInt32LE(0x08074b50, 0);
    d.writeUInt32LE(r.crc, 4);
    writeU64(d, r.size, 8);
    writeU64(d, r.size, 16);
    return d;
  }
  const d = Buffer.alloc(16);
  d.writeUInt32LE(0x08074b50, 0);
  d.writeUInt32LE(r.crc, 4);
  d.writeUInt32LE(r.size, 8);
  d.writeUInt32LE(r.size, 12);
  return d;
}

function centralHeader(r: CentralRecord): Buffer {
  const needSizes = r.zip64;
  const needOffset = r.offset >= MAX32;
  const fields: number[] = [];
  if (needSizes) fields.push(r.size, r.size);
  if (needOffset) fields.push(r.offset);
  let extra = Buffer.alloc(0);
  if (fields.length > 0) {
    extra = Buffer.alloc(4 + fields.length * 8);
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(fields.length * 8, 2);
    fields.forEach((v, i) => writeU64(extra, v, 4 + i * 8));
  }
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE((3 << 8) | 45, 4); // made by Unix, spec 4.5
  h.writeUInt16LE(fields.length > 0 ? 45 : 20, 6);
  h.writeUInt16LE(FLAG_DESCRIPTOR | FLAG_UTF8, 8);
  h.writeUInt16LE(0, 10);
  h.writeUInt16LE(r.dosTime, 12);
  h.writeUInt16LE(r.dosDate, 14);
  h.writeUInt32LE(r.crc, 16);
  h.writeUInt32LE(needSizes ? MAX32 : r.size, 20);
  h.writeUInt32LE(needSizes ? MAX32 : r.size, 24);
  h.writeUInt16LE(r.name.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt16LE(0, 32);
  h.writeUInt16LE(0, 34);
  h.writeUInt16LE(0, 36);
  h.writeUInt32LE(r.externalAttr >>> 0, 38);
  h.writeUInt32LE(needOffset ? MAX32 : r.offset, 42);
  return Buffer.concat([h, r.name, extra]);
}

function endRecords(count: number, cdOffset: number, cdSize: number): Buffer {
  const parts: Buffer[] = [];
  const zip64 = count >= 0xffff || cdOffset >= MAX32 || cdSize >= MAX32;
  if (zip64) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    writeU64(z, 44, 4);
    z.writeUInt16LE((3 << 8) | 45, 12);
    z.writeUInt16LE(45, 14);
    z.writeUInt32LE(0, 16);
    z.writeUInt32LE(0, 20);
    writeU64(z, count, 24);
    writeU64(z, count, 32);
    writeU64(z, cdSize, 40);
    writeU64(z, cdOffset, 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeUInt32LE(0, 4);
    writeU64(loc, cdOffset + cdSize, 8);
    loc.writeUInt32LE(1, 16);
    parts.push(z, loc);
  }
  const e = Buffer.alloc(22);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(Math.min(count, 0xffff), 8);
  e.writeUInt16LE(Math.min(count, 0xffff), 10);
  e.writeUInt32LE(Math.min(cdSize, MAX32), 12);
  e.writeUInt32LE(Math.min(cdOffset, MAX32), 16);
  parts.push(e);
  return Buffer.concat(parts);
}

export async function* zipStream(entries: AsyncIterable<ArchiveEntry>): AsyncGenerator<Buffer> {
  const central: CentralRecord[] = [];
  let offset = 0;
  for await (const entry of entries) {
    const { time, date } = dosDateTime(entry.mtimeMs);
    const size = entry.isDir ? 0 : entry.size;
    const record: CentralRecord = {
      name: Buffer.from(entry.isDir ? entry.name + '/' : entry.name, 'utf8'),
      crc: 0,
      size,
      offset,
      dosTime: time,
      dosDate: date,
      // Unix mode in the high half; MS-DOS directory bit for folders.
      externalAttr: ((entry.mode & 0xffff) * 0x10000 + (entry.isDir ? 0x10 : 0)) >>> 0,
      zip64: size >= MAX32,
    };
    const head = localHeader(record);
    yield head;
    offset += head.length;
    if (!entry.isDir && size > 0) {
      let crc = 0;
      for await (const chunk of readExactly(entry)) {
        crc = zlib.crc32(chunk, crc);
        yield chunk;
      }
      record.crc = crc;
      offset += size;
    }
    const desc = dataDescriptor(record);
    yield desc;
    offset += desc.length;
    central.push(record);
  }
  const cdOffset = offset;
  let cdSize = 0;
  let batch: Buffer[] = [];
  for (const r of central) {
    const h = centralHeader(r);
    cdSize += h.length;
    batch.push(h);
    if (batch.length >= 512) {
      yield Buffer.concat(batch);
      batch = [];
    }
  }
  if (batch.length) yield Buffer.concat(batch);
  yield endRecords(central.length, cdOffset, cdSize);
}
