import { shortLivedBuffer } from '../../buffer-garbage.js';
import os from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

/**
 * gzip made of independently compressed blocks, several at once on the thread pool (as pigz
 * does). One zlib stream deflates on one thread while the event loop waits for it, and
 * `tar czf` overlaps reading with compressing in two processes; deflate is over 90 % of the
 * work of a tar.gz, so spreading the blocks over the cores is what gives the row its margin.
 *
 * Each block is raw deflate primed with the last 32 KiB of the block before (so matches across a
 * boundary are still found) and ends with a sync flush, which byte-aligns it: the blocks
 * concatenated are one deflate stream, the last one ending it. The result is one ordinary gzip
 * member; only a few bytes per block differ from a single-stream encoding.
 */

/** Input per block: large enough that a block costs one trip to the thread pool per ~25 ms of deflate. */
export const GZIP_BLOCK = 1024 * 1024;
const WINDOW = 32 * 1024;
/** Output room for one block in one go (stored blocks add 5 bytes per 16 KiB, plus a flush marker). */
const OUT_CHUNK = GZIP_BLOCK + GZIP_BLOCK / 64 + 1024;

/**
 * Blocks compressed at once: one per core, at most 3 so that one thread of the pool (4 by
 * default) stays free for the file reads that feed them and for other requests.
 */
export function defaultGzipParallelism(): number {
  return Math.max(1, Math.min(os.availableParallelism(), 3));
}

interface Job {
  out?: Buffer;
  done: Promise<void>;
}

function deflateBlock(
  input: Buffer,
  level: number,
  dictionary: Buffer | undefined,
  last: boolean,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zlib.deflateRaw(
      input,
      {
        level,
        chunkSize: Math.max(OUT_CHUNK, input.length + 1024),
        finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
        ...(dictionary ? { dictionary } : {}),
      },
      (err, out) => (err ? reject(err) : resolve(out)),
    );
  });
}

const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]); // no name, no mtime, Unix

export class BlockGzip extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private window: Buffer | undefined;
  private readonly jobs: Job[] = [];
  private crc = 0;
  private size = 0;
  private failed = false;
  private wakeProducer: (() => void) | undefined;

  constructor(
    private readonly level = 6,
    private readonly parallel = defaultGzipParallelism(),
  ) {
    // Room to read ahead while every slot is busy deflating.
    super({ writableHighWaterMark: GZIP_BLOCK, readableHighWaterMark: GZIP_BLOCK });
    this.push(HEADER);
  }

  /** Blocks being deflated or waiting for an earlier one to leave. */
  get blocksInFlight(): number {
    return this.jobs.length;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.crc = zlib.crc32(chunk, this.crc);
    this.size += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < GZIP_BLOCK) return callback();
    this.deflatePending(false).then(() => callback(), callback);
  }

  override _read(size: number): void {
    const wake = this.wakeProducer;
    this.wakeProducer = undefined;
    wake?.();
    super._read(size);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A producer waiting for the reader gives up instead of waiting forever.
    const wake = this.wakeProducer;
    this.wakeProducer = undefined;
    wake?.();
    super._destroy(err, callback);
  }

  override _flush(callback: TransformCallback): void {
    this.deflatePending(true)
      .then(() => Promise.all(this.jobs.map((j) => j.done)))
      .then(() => {
        const trailer = Buffer.alloc(8);
        trailer.writeUInt32LE(this.crc >>> 0, 0);
        trailer.writeUInt32LE(this.size % 2 ** 32, 4);
        callback(null, trailer);
      }, callback);
  }

  /** Deflates the pending input in whole blocks; at the end, the rest too (possibly nothing) as the last. */
  private async deflatePending(end: boolean): Promise<void> {
    while (this.pendingBytes >= GZIP_BLOCK) await this.startWhenFree(this.cutPending(GZIP_BLOCK), false);
    if (end) await this.startWhenFree(this.cutPending(this.pendingBytes), true);
  }

  /** The first `n` pending bytes as one buffer. */
  private cutPending(n: number): Buffer {
    const all = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    const rest = all.subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return all.subarray(0, n);
  }

  /**
   * Waits for a free slot (the oldest job) and for the reader to want more, then starts deflating
   * `input`: a slow client holds the compression back instead of letting output pile up.
   */
  private async startWhenFree(input: Buffer, last: boolean): Promise<void> {
    while (!this.failed && this.jobs.length >= this.parallel) await this.jobs[0]?.done;
    while (!this.failed && !this.destroyed && this.readableLength >= this.readableHighWaterMark) {
      await new Promise<void>((resolve) => (this.wakeProducer = resolve));
    }
    if (this.failed) throw new Error('a gzip block failed');
    if (this.destroyed) return;
    const dictionary = this.window;
    if (!last) this.window = this.nextWindow(input);
    const job: Job = { done: Promise.resolve() };
    job.done = deflateBlock(input, this.level, dictionary, last).then(
      (out) => {
        job.out = out;
        this.pushFinished();
      },
      (err: Error) => {
        this.failed = true;
        this.destroy(err);
      },
    );
    this.jobs.push(job);
  }

  /** Blocks leave in order: each finished one at the head of the queue goes out. */
  private pushFinished(): void {
    while (this.jobs[0]?.out) {
      const job = this.jobs.shift() as Job;
      const out = job.out as Buffer;
      job.out = undefined;
      shortLivedBuffer(out.length);
      this.push(out);
    }
  }

  /** The last 32 KiB of input so far, copied so that the block itself can be let go. */
  private nextWindow(input: Buffer): Buffer {
    if (input.length >= WINDOW) return Buffer.from(input.subarray(input.length - WINDOW));
    const joined = this.window ? Buffer.concat([this.window, input]) : input;
    return Buffer.from(joined.subarray(Math.max(0, joined.length - WINDOW)));
  }
}
