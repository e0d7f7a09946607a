import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BlockGzip, GZIP_BLOCK } from './gzip-blocks.js';

/** Text that compresses and repeats across block boundaries, mixed with incompressible runs. */
function mixed(bytes: number): Buffer {
  const text = Buffer.from('the quick brown fox jumps over the lazy dog 0123456789\n'.repeat(400));
  const parts: Buffer[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const part = i % 3 === 2 ? crypto.randomBytes(40_000) : text;
    parts.push(part);
    n += part.length;
  }
  return Buffer.concat(parts).subarray(0, bytes);
}

async function gzipInPieces(input: Buffer, piece: number, parallel?: number): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for (let at = 0; at < input.length; at += piece) pieces.push(input.subarray(at, at + piece));
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(pieces),
    new BlockGzip(6, parallel),
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(out);
}

const hasGzip = spawnSync('sh', ['-c', 'command -v gzip']).status === 0;

describe('BlockGzip', () => {
  it('writes one gzip member that zlib and gzip decode to the input, whatever the block cuts', async () => {
    const cases: [number, number, number | undefined][] = [
      [0, 1, undefined],
      [1, 1, 1],
      [GZIP_BLOCK, 256 * 1024, 2],
      [GZIP_BLOCK * 3 + 12_345, 256 * 1024, 3],
      [GZIP_BLOCK * 2 + 7, 100_000, 1],
    ];
    for (const [size, piece, parallel] of cases) {
      const input = mixed(size);
      const gz = await gzipInPieces(input, piece, parallel);
      // gunzip checks the CRC and the length in the trailer.
      expect(zlib.gunzipSync(gz).equals(input)).toBe(true);
      if (hasGzip) {
        const out = spawnSync('gzip', ['-dc'], { input: gz, maxBuffer: 1 << 26 });
        expect(out.status).toBe(0);
        expect(out.stdout.equals(input)).toBe(true);
      }
    }
  });

  it('compresses about as well as one zlib stream (blocks see the window before them)', async () => {
    const input = mixed(GZIP_BLOCK * 4);
    const ours = await gzipInPieces(input, 64 * 1024, 3);
    const single = zlib.gzipSync(input, { level: 6 });
    expect(ours.length).toBeLessThan(single.length * 1.01);
  });

  it('stops compressing while nobody reads: the output waiting stays bounded', async () => {
    const input = crypto.randomBytes(GZIP_BLOCK * 16);
    const parallel = 2;
    const gz = new BlockGzip(6, parallel);
    // One big chunk: only the compressor's own back-pressure can stop it early.
    Readable.from([input]).pipe(gz);
    await stalled(gz);
    // Random data does not shrink: without back-pressure all 16 MiB would be waiting here.
    expect(gz.readableLength).toBeLessThan(gz.readableHighWaterMark + parallel * GZIP_BLOCK * 1.05);
    const out: Buffer[] = [];
    for await (const chunk of gz) out.push(chunk as Buffer);
    expect(zlib.gunzipSync(Buffer.concat(out)).equals(input)).toBe(true);
  });

  it('closes cleanly when destroyed while it waits for a reader (a client that went away)', async () => {
    const gz = new BlockGzip(6, 2);
    const source = Readable.from([crypto.randomBytes(GZIP_BLOCK * 16)]);
    source.pipe(gz);
    await stalled(gz);
    const closed = new Promise((resolve) => gz.once('close', resolve));
    gz.destroy();
    await closed;
    // Whatever was deflating finishes and is dropped; nothing new starts.
    await new Promise<void>((resolve) => {
      const look = () => (gz.blocksInFlight === 0 ? resolve() : setImmediate(look));
      look();
    });
    expect(gz.destroyed).toBe(true);
  });
});

/** Resolves once the compressor has stopped: its output is full and no block is being deflated. */
function stalled(gz: BlockGzip): Promise<void> {
  return new Promise<void>((resolve) => {
    const look = () =>
      gz.readableLength >= gz.readableHighWaterMark && gz.blocksInFlight === 0
        ? resolve()
        : setImmediate(look);
    look();
  });
}
