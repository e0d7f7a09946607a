import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { crc32c, createSnappyFramer, snappyCompressBlock } from './snappy.js';

/** A reference decoder of the raw snappy format, for the round trip. */
function decodeBlock(buf: Buffer): Buffer {
  let i = 0;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    const b = buf[i++]!;
    len |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  const out = Buffer.alloc(len);
  let o = 0;
  while (i < buf.length) {
    const tag = buf[i++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = buf.readUIntLE(i, bytes);
        i += bytes;
      }
      n += 1;
      buf.copy(out, o, i, i + n);
      i += n;
      o += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | buf[i++]!;
    } else {
      n = (tag >>> 2) + 1;
      offset = buf.readUInt16LE(i);
      i += 2;
    }
    for (let k = 0; k < n; k++, o++) out[o] = out[o - offset]!;
  }
  expect(o).toBe(len);
  return out;
}

describe('snappy', () => {
  it('computes CRC-32C', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('round-trips blocks of every kind', () => {
    const samples = [
      Buffer.alloc(0),
      Buffer.from('a'),
      Buffer.from('abcabcabcabcabcabcabcabcabcabc'),
      Buffer.alloc(65536, 7),
      crypto.randomBytes(65536),
      Buffer.from('hello world, hello world! '.repeat(2000)).subarray(0, 65536),
    ];
    for (const s of samples) expect(decodeBlock(snappyCompressBlock(s)).equals(s)).toBe(true);
    expect(snappyCompressBlock(Buffer.alloc(65536, 7)).length).toBeLessThan(5000);
  });

  it('frames a stream with the identifier and checksummed chunks', async () => {
    const input = Buffer.concat([Buffer.from('x'.repeat(100_000)), crypto.randomBytes(70_000)]);
    const chunks: Buffer[] = [];
    for await (const c of Readable.from([input.subarray(0, 1000), input.subarray(1000)]).pipe(
      createSnappyFramer(),
    )) {
      chunks.push(c as Buffer);
    }
    const framed = Buffer.concat(chunks);
    expect(framed.subarray(0, 10).toString('latin1')).toBe('\xff\x06\x00\x00sNaPpY');
    const parts: Buffer[] = [];
    for (let i = 10; i < framed.length;) {
      const type = framed[i]!;
      const len = framed.readUIntLE(i + 1, 3);
      const data = framed.subarray(i + 8, i + 4 + len);
      const plain = type === 0 ? decodeBlock(data) : data;
      const c = crc32c(plain);
      expect(framed.readUInt32LE(i + 4)).toBe(((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0);
      parts.push(plain);
      i += 4 + len;
    }
    expect(Buffer.concat(parts).equals(input)).toBe(true);
  });
});
