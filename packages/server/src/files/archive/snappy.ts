import { Transform, type TransformCallback } from 'node:stream';

/**
 * Snappy framing format (the `.sz` of File Browser's `tarsz`), written in plain TypeScript: the
 * npm snappy bindings need a native build, and the format is small. Each chunk of at most 64 KiB
 * is compressed with a greedy hash-table matcher, or stored when that does not help.
 */

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256 * 4);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  // Slicing-by-4 tables.
  for (let i = 0; i < 256; i++) {
    for (let s = 1; s < 4; s++) {
      const prev = t[(s - 1) * 256 + i] as number;
      t[s * 256 + i] = ((prev >>> 8) ^ (t[prev & 0xff] as number)) >>> 0;
    }
  }
  return t;
})();

export function crc32c(data: Uint8Array): number {
  const t = CRC32C_TABLE;
  let crc = 0xffffffff;
  let i = 0;
  const n4 = data.length - (data.length % 4);
  for (; i < n4; i += 4) {
    crc ^=
      (data[i] as number) |
      ((data[i + 1] as number) << 8) |
      ((data[i + 2] as number) << 16) |
      ((data[i + 3] as number) << 24);
    crc =
      (t[768 + (crc & 0xff)] as number) ^
      (t[512 + ((crc >>> 8) & 0xff)] as number) ^
      (t[256 + ((crc >>> 16) & 0xff)] as number) ^
      (t[crc >>> 24] as number);
  }
  for (; i < data.length; i++) crc = (t[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function maskedCrc(data: Uint8Array): number {
  const c = crc32c(data);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

const HASH_BITS = 14;

/** Compresses one block (≤ 64 KiB) to the snappy raw format. */
export function snappyCompressBlock(input: Buffer): Buffer {
  const out = Buffer.allocUnsafe(32 + input.length + Math.ceil(input.length / 6));
  let o = 0;
  // preamble: varint of the uncompressed length
  let len = input.length;
  while (len >= 0x80) {
    out[o++] = (len & 0x7f) | 0x80;
    len >>>= 7;
  }
  out[o++] = len;

  const emitLiteral = (from: number, to: number) => {
    let n = to - from;
    if (n <= 0) return;
    const m = n - 1;
    if (m < 60) out[o++] = m << 2;
    else if (m < 0x100) {
      out[o++] = 60 << 2;
      out[o++] = m;
    } else {
      out[o++] = 61 << 2;
      out[o++] = m & 0xff;
      out[o++] = m >>> 8;
    }
    input.copy(out, o, from, to);
    o += n;
    n = 0;
  };
  const emitCopy = (offset: number, length: number) => {
    while (length > 0) {
      // 2-byte-offset copies carry 1..64 bytes; leave at least 4 for a last piece.
      const n = length > 64 ? (length - 64 < 4 ? 60 : 64) : length;
      if (n >= 4 && n <= 11 && offset < 2048) {
        out[o++] = ((offset >>> 8) << 5) | ((n - 4) << 2) | 1;
        out[o++] = offset & 0xff;
      } else {
        out[o++] = ((n - 1) << 2) | 2;
        out[o++] = offset & 0xff;
        out[o++] = offset >>> 8;
      }
      length -= n;
    }
  };

  const table = new Int32Array(1 << HASH_BITS).fill(-1);
  const hash = (i: number) =>
    (Math.imul(input.readUInt32LE(i), 0x1e35a7bd) >>> (32 - HASH_BITS)) & ((1 << HASH_BITS) - 1);
  let literalStart = 0;
  let i = 0;
  const limit = input.length - 4;
  while (i <= limit) {
    const h = hash(i);
    const candidate = table[h] as number;
    table[h] = i;
    if (candidate >= 0 && i - candidate < 65536 && input.readUInt32LE(candidate) === input.readUInt32LE(i)) {
      let matchLen = 4;
      while (i + matchLen < input.length && input[candidate + matchLen] === input[i + matchLen]) matchLen++;
      emitLiteral(literalStart, i);
      emitCopy(i - candidate, matchLen);
      i += matchLen;
      literalStart = i;
      continue;
    }
    i++;
  }
  emitLiteral(literalStart, input.length);
  return out.subarray(0, o);
}

const MAX_CHUNK = 65536;
const STREAM_ID = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);

function chunkHeader(type: number, length: number, crc: number): Buffer {
  const h = Buffer.alloc(8);
  h[0] = type;
  h.writeUIntLE(length + 4, 1, 3);
  h.writeUInt32LE(crc, 4);
  return h;
}

/** A Transform writing the snappy framing format. */
export function createSnappyFramer(): Transform {
  let started = false;
  let pending: Buffer[] = [];
  let pendingLen = 0;
  const emit = (t: Transform, block: Buffer) => {
    const crc = maskedCrc(block);
    const compressed = snappyCompressBlock(block);
    if (compressed.length < block.length - block.length / 8) {
      t.push(Buffer.concat([chunkHeader(0x00, compressed.length, crc), compressed]));
    } else {
      t.push(Buffer.concat([chunkHeader(0x01, block.length, crc), block]));
    }
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (!started) {
        this.push(STREAM_ID);
        started = true;
      }
      pending.push(chunk);
      pendingLen += chunk.length;
      if (pendingLen >= MAX_CHUNK) {
        let all = Buffer.concat(pending);
        while (all.length >= MAX_CHUNK) {
          emit(this, all.subarray(0, MAX_CHUNK));
          all = all.subarray(MAX_CHUNK);
        }
        pending = all.length ? [Buffer.from(all)] : [];
        pendingLen = all.length;
      }
      cb();
    },
    flush(cb: TransformCallback) {
      if (!started) this.push(STREAM_ID);
      if (pendingLen > 0) emit(this, Buffer.concat(pending));
      cb();
    },
  });
}
