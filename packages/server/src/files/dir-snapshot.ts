import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import { Worker, type MessagePort } from 'node:worker_threads';
import { adaptiveIo, type AdaptiveIo } from './adaptive-io.js';

/**
 * A folder's entries with the `lstat` fields a listing needs, packed in one Float64Array
 * (`FIELDS` numbers per entry) so that it crosses between threads without a copy and costs the
 * main thread no object per entry. Times are split into seconds and nanoseconds and the inode
 * into two 32-bit halves, so every number is exact in a double.
 */
export class DirSnapshot {
  private namesList: string[] | undefined;
  private joinedNames: string | undefined;
  /** The reader thread whose buffer `data` is, to give it back (see `release`). */
  origin: { recycle(buffer: ArrayBuffer): void } | undefined;

  constructor(
    names: string[] | { joined: string; count: number },
    readonly data: Float64Array,
  ) {
    if (Array.isArray(names)) this.namesList = names;
    else {
      this.joinedNames = names.joined;
      if (names.count === 0) this.namesList = [];
    }
  }

  get names(): string[] {
    this.namesList ??= (this.joinedNames as string).split('\0');
    return this.namesList;
  }

  /** The names joined with NUL, which no name contains. */
  get joined(): string {
    this.joinedNames ??= (this.namesList as string[]).join('\0');
    return this.joinedNames;
  }

  /** Same entries, in the same order, with the same metadata. */
  sameAs(other: DirSnapshot): boolean {
    if (this.data.length !== other.data.length || this.joined !== other.joined) return false;
    const a = Buffer.from(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    const b = Buffer.from(other.data.buffer, other.data.byteOffset, other.data.byteLength);
    return a.equals(b);
  }

  /**
   * Gives `data`'s buffer back to the thread that filled it. The snapshot must not be used after
   * this (its `data` becomes empty); nothing else may hold a view of `data`.
   */
  release(): void {
    const origin = this.origin;
    this.origin = undefined;
    const buffer = this.data.buffer;
    if (origin && buffer instanceof ArrayBuffer && buffer.byteLength > 64 * 1024) origin.recycle(buffer);
  }

  /** Bytes held, roughly. */
  get weight(): number {
    return this.data.byteLength + 2 * this.joined.length;
  }
}

export const FIELDS = 9;
/** st_mode, or -1 when the entry could not be stat'ed (vanished or unreadable). */
export const F_MODE = 0;
export const F_SIZE = 1;
export const F_MTIME_S = 2;
export const F_MTIME_NS = 3;
export const F_CTIME_S = 4;
export const F_CTIME_NS = 5;
export const F_INO_HI = 6;
export const F_INO_LO = 7;
export const F_DEV = 8;

/**
 * Writes the lstat of `names[from..to)` into `data`. Self-contained (it is also the body of the
 * worker, see `workerSource`): no reference to anything outside it but its arguments.
 */
export function statInto(
  lstat: (p: string) => fs.BigIntStats | undefined,
  prefix: string,
  names: readonly string[],
  data: Float64Array,
  from: number,
  to: number,
): void {
  const GIGA = 1000000000n;
  for (let i = from; i < to; i++) {
    const o = i * 9;
    let st: fs.BigIntStats | undefined;
    try {
      st = lstat(prefix + names[i]);
    } catch {
      st = undefined;
    }
    if (!st) {
      data[o] = -1;
      continue;
    }
    data[o] = Number(st.mode);
    data[o + 1] = Number(st.size);
    data[o + 2] = Number(st.mtimeNs / GIGA);
    data[o + 3] = Number(st.mtimeNs % GIGA);
    data[o + 4] = Number(st.ctimeNs / GIGA);
    data[o + 5] = Number(st.ctimeNs % GIGA);
    data[o + 6] = Number(st.ino >> 32n);
    data[o + 7] = Number(st.ino & 0xffffffffn);
    data[o + 8] = Number(st.dev);
  }
}

const lstatSync = (p: string) => fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });

function prefixOf(dir: string): string {
  return dir === '/' ? '/' : dir + '/';
}

/**
 * The worker's program: read a folder, stat every entry, send the names and numbers back. Like
 * `statInto` it is sent to the worker as source text, so it uses only its parameters.
 */
function workerMain(parentPort: MessagePort, nodeFs: typeof fs, statIntoFn: typeof statInto): void {
  const lstat = (p: string) => nodeFs.lstatSync(p, { bigint: true, throwIfNoEntry: false });
  // Buffers the main thread is done with come back, so that big folders listed again and again
  // do not leave a trail of dead buffers for the collector.
  const spare: ArrayBuffer[] = [];
  const take = (bytes: number): ArrayBuffer => {
    let best = -1;
    for (let i = 0; i < spare.length; i++) {
      const size = spare[i]!.byteLength;
      if (size >= bytes && size <= bytes * 2 && (best < 0 || size < spare[best]!.byteLength)) best = i;
    }
    return best < 0 ? new ArrayBuffer(bytes) : spare.splice(best, 1)[0]!;
  };
  parentPort.on('message', (job: { id: number; dir: string } | { recycle: ArrayBuffer }) => {
    if ('recycle' in job) {
      if (spare.length >= 8) spare.shift();
      spare.push(job.recycle);
      return;
    }
    const start = performance.now();
    try {
      const names = nodeFs.readdirSync(job.dir);
      const data = new Float64Array(take(names.length * 9 * 8), 0, names.length * 9);
      statIntoFn(lstat, job.dir === '/' ? '/' : job.dir + '/', names, data, 0, names.length);
      // One string crosses threads far cheaper than an array of thousands of strings.
      parentPort.postMessage(
        { id: job.id, names: names.join('\0'), count: names.length, data, ms: performance.now() - start },
        [data.buffer],
      );
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      parentPort.postMessage({ id: job.id, error: { code: e.code, message: e.message } });
    }
  });
}

/**
 * An eval'd worker is a CommonJS script. The `require` calls stay inside this string: a bundler
 * rewrites `require` in code it compiles, and the worker has none of the bundle's helpers.
 */
const workerSource = `(${workerMain.toString()})(require('node:worker_threads').parentPort, require('node:fs'), ${statInto.toString()});`;

interface Job {
  dir: string;
  dev: number;
  resolve: (s: DirSnapshot) => void;
  reject: (err: Error) => void;
}

interface WorkerReply {
  id: number;
  names?: string;
  count?: number;
  data?: Float64Array;
  ms?: number;
  error?: { code?: string; message: string };
}

/** An error shaped like the one `fs.readdir` throws, so callers see no difference. */
function fsError(e: { code?: string; message: string }): NodeJS.ErrnoException {
  const err = new Error(e.message) as NodeJS.ErrnoException;
  if (e.code) err.code = e.code;
  return err;
}

class ReaderThread {
  readonly worker: Worker;
  readonly jobs = new Map<number, Job>();
  dead = false;

  constructor(onDone: (job: { dir: string; dev: number }, ms: number, count: number) => void) {
    this.worker = new Worker(workerSource, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    });
    // Idle workers must not keep the process alive (CLI commands, tests).
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => {
      const job = this.jobs.get(reply.id);
      if (!job) return;
      this.jobs.delete(reply.id);
      if (this.jobs.size === 0) this.worker.unref();
      if (reply.error) return job.reject(fsError(reply.error));
      const count = reply.count ?? 0;
      onDone(job, reply.ms ?? 0, count);
      const snapshot = new DirSnapshot({ joined: reply.names ?? '', count }, reply.data as Float64Array);
      snapshot.origin = this;
      job.resolve(snapshot);
    });
    const fail = (err: Error) => {
      this.dead = true;
      for (const job of this.jobs.values()) job.reject(err);
      this.jobs.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`directory reader exited with code ${code}`)));
  }

  recycle(buffer: ArrayBuffer): void {
    if (!this.dead) this.worker.postMessage({ recycle: buffer }, [buffer]);
  }

  read(id: number, dir: string, dev: number): Promise<DirSnapshot> {
    return new Promise((resolve, reject) => {
      if (this.jobs.size === 0) this.worker.ref();
      this.jobs.set(id, { dir, dev, resolve, reject });
      this.worker.postMessage({ id, dir });
    });
  }
}

export interface DirReaderOptions {
  /** Reader threads; 0 reads on the main thread only. */
  threads: number;
  io: AdaptiveIo;
}

/**
 * Reads folders for listings. On a fast local file system the reading and stat'ing happen on a
 * few worker threads, in parallel with the main thread's own work (rules, types, JSON) for other
 * requests; otherwise (a network or FUSE file system, a device found slow, no worker available)
 * on the main thread through `AdaptiveIo`, synchronously in slices or through the thread pool.
 */
export class DirReader {
  private readonly threads: ReaderThread[] = [];
  private nextId = 1;
  private failures = 0;

  constructor(private readonly opts: DirReaderOptions) {}

  async read(dir: string, dev: number | bigint): Promise<DirSnapshot> {
    if (this.opts.threads > 0 && (await this.opts.io.isFast(dev, dir))) {
      const thread = this.thread();
      if (thread) {
        try {
          return await thread.read(this.nextId++, dir, Number(dev));
        } catch (err) {
          if (!thread.dead) throw err; // the file system's answer (ENOENT, EACCES…)
          // The thread died: this folder is read again below, on the main thread.
        }
      }
    }
    return this.readHere(dir, dev);
  }

  /** The main-thread way: readdir, then lstat through `AdaptiveIo`. */
  async readHere(dir: string, dev: number | bigint): Promise<DirSnapshot> {
    const names = await fsp.readdir(dir);
    const data = new Float64Array(names.length * FIELDS);
    const prefix = prefixOf(dir);
    const indexes = names.map((_, i) => i);
    await this.opts.io.map(
      dev,
      dir,
      indexes,
      (i) => statInto(lstatSync, prefix, names, data, i, i + 1),
      async (i) => {
        const st = await fsp.lstat(prefix + names[i], { bigint: true }).catch(() => undefined);
        statInto(() => st, prefix, names, data, i, i + 1);
      },
    );
    return new DirSnapshot(names, data);
  }

  /** The least busy live thread, starting threads on first use. */
  private thread(): ReaderThread | undefined {
    for (let i = this.threads.length - 1; i >= 0; i--) {
      if (this.threads[i]!.dead) this.threads.splice(i, 1);
    }
    // A thread that keeps dying (resource limits, a broken platform) is not restarted forever.
    while (this.threads.length < this.opts.threads && this.failures < 8) {
      try {
        this.threads.push(
          new ReaderThread((job, ms, count) => this.opts.io.observe(job.dev, job.dir, ms, count)),
        );
      } catch {
        this.failures++;
        break;
      }
    }
    let best: ReaderThread | undefined;
    for (const t of this.threads) if (!best || t.jobs.size < best.jobs.size) best = t;
    return best;
  }

  /** Stops the threads (tests; the process does not wait for them anyway). */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}

/** Reader threads for this machine: one per core, at most four, leaving the main thread its own. */
export function defaultReaderThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

export const dirReader = new DirReader({ threads: defaultReaderThreads(), io: adaptiveIo });
