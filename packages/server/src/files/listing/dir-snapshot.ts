import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FolderStats } from './native.js';
import { isBigFolder, poolShare } from '../../heavy-work.js';
import { adaptiveIo, type AdaptiveIo } from './adaptive-io.js';
import type { Pinned } from '../access/anchor.js';
import {
  FIELDS,
  pickEntries,
  SPARE_MAX_BYTES,
  statInto,
  type FolderScan,
  type ReaderMessage,
  type ReaderReply,
} from './dir-layout.js';
import type { PreparedNameFilter } from './name-filter.js';

/**
 * A folder's entries with the `lstat` fields a listing needs, packed in one Float64Array
 * (`FIELDS` numbers per entry, laid out as dir-layout.ts says) so that it crosses between threads
 * without a copy and costs the main thread no object per entry.
 */
export class DirSnapshot {
  private namesList: string[] | undefined;
  private namesBytes: Uint8Array | undefined;

  /** The reader thread whose buffers `data` and the names' bytes are, to give them back (see `release`); none for the other ways. */
  origin: { recycle(buffer: ArrayBuffer): void } | undefined;

  /**
   * `names` is the list, or (from a reader thread or the native addon) the names joined with NUL
   * as UTF-8 bytes: bytes cross threads by transfer and compare with one `memcmp`, where a string
   * would be copied into the main heap on every listing (a 10,000-name folder is a 150 KB string,
   * one more for the collector per request even when the listing comes from the cache).
   */
  constructor(
    names: string[] | { bytes: Uint8Array; count: number },
    readonly data: Float64Array,
  ) {
    if (Array.isArray(names)) this.namesList = names;
    else {
      this.namesBytes = names.bytes;
      if (names.count === 0) this.namesList = [];
    }
  }

  get names(): string[] {
    this.namesList ??= this.encoded.toString('utf8').split('\0');
    return this.namesList;
  }

  /** The names joined with NUL (which no name contains), as UTF-8. */
  private get encoded(): Buffer {
    const bytes = this.namesBytes;
    if (bytes) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const encoded = Buffer.from((this.namesList as string[]).join('\0'));
    this.namesBytes = encoded;
    return encoded;
  }

  /** Same entries, in the same order, with the same metadata. */
  sameAs(other: DirSnapshot): boolean {
    if (this.data.length !== other.data.length || !this.encoded.equals(other.encoded)) return false;
    const a = Buffer.from(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    const b = Buffer.from(other.data.buffer, other.data.byteOffset, other.data.byteLength);
    return a.equals(b);
  }

  /**
   * SHA-256 of the entries and their metadata: equal digests mean `sameAs` (the count comes first,
   * so the boundary between names and numbers is fixed). Lets a big listing be compared with the
   * next snapshot without keeping its own (9 MB for 100,000 entries).
   */
  digest(): Buffer {
    const count = Buffer.alloc(8);
    count.writeDoubleLE(this.data.length);
    return createHash('sha256')
      .update(count)
      .update(this.encoded)
      .update(new Uint8Array(this.data.buffer, this.data.byteOffset, this.data.byteLength))
      .digest();
  }

  /**
   * Gives the buffers back to the thread that filled them. The snapshot must not be used after
   * this (its `data` becomes empty); nothing else may hold a view of them.
   */
  release(): void {
    const origin = this.origin;
    this.origin = undefined;
    if (!origin) return;
    for (const buffer of [this.data.buffer, this.namesBytes?.buffer]) {
      // A buffer the thread would not keep stays here, where collections are frequent: in the
      // thread it would lie until the thread's next collection, which an idle thread never has.
      if (
        buffer instanceof ArrayBuffer &&
        buffer.byteLength > 64 * 1024 &&
        buffer.byteLength <= SPARE_MAX_BYTES
      ) {
        origin.recycle(buffer);
      }
    }
  }

  /**
   * Lets the names decoded from the reader thread's bytes go, keeping the bytes (all `sameAs`
   * needs): a snapshot kept by the listing cache would otherwise hold a string per entry.
   */
  forgetNames(): void {
    if (this.namesBytes && this.namesBytes.byteLength > 0) this.namesList = undefined;
  }

  /** Bytes held, roughly. */
  get weight(): number {
    return this.data.byteLength + this.encoded.byteLength;
  }
}

const lstatSync = (p: string) => fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });

function prefixOf(dir: string): string {
  return dir === '/' ? '/' : dir + '/';
}

/**
 * The reader threads' program, a module of its own: dist/dir-reader-worker.js beside the bundle's
 * chunks (an entry of build.mjs); from the TypeScript source (the tests), the .ts file beside this
 * one, which the test runner's module hooks compile (test/ts-hooks.mjs).
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './dir-reader-worker.ts' : './dir-reader-worker.js',
  import.meta.url,
);

interface Job {
  dir: string;
  dev: number;
  resolve: (reply: ReaderReply) => void;
  reject: (err: Error) => void;
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
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    onDone: (job: { dir: string; dev: number }, ms: number, count: number) => void,
    private readonly idleMs: number,
  ) {
    this.worker = new Worker(WORKER_URL, {
      // A small young generation: a reader's garbage (names, stats) dies within one folder, and
      // each thread's heap counts against the server's memory (2 MB: same speed, 25 MB less).
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 2 },
    });
    // Idle workers must not keep the process alive (CLI commands, tests).
    this.worker.unref();
    this.worker.on('message', (reply: ReaderReply) => {
      const job = this.jobs.get(reply.id);
      if (!job) return;
      this.jobs.delete(reply.id);
      if (this.jobs.size === 0) this.idle();
      if (reply.error) return job.reject(fsError(reply.error));
      onDone(job, reply.ms ?? 0, reply.count ?? 0);
      job.resolve(reply);
    });
    const fail = (err: Error) => {
      this.dead = true;
      for (const job of this.jobs.values()) job.reject(err);
      this.jobs.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`directory reader exited with code ${code}`)));
  }

  /**
   * Lets the process exit without waiting for the thread, and ends the thread once it has had
   * nothing to do for `idleMs`: its heap is memory the server holds for nothing between bursts
   * of listings (a new thread starts in a few milliseconds when the next one comes).
   */
  private idle(): void {
    this.worker.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.jobs.size > 0) return;
      this.dead = true;
      // A thread that cannot be ended has ended already.
      this.worker.terminate().then(undefined, () => undefined);
    }, this.idleMs);
    this.idleTimer.unref();
  }

  recycle(buffer: ArrayBuffer): void {
    if (!this.dead) this.worker.postMessage({ recycle: buffer }, [buffer]);
  }

  async read(id: number, dir: string, dev: number): Promise<DirSnapshot> {
    const reply = await this.send(id, dir, dev);
    const snapshot = new DirSnapshot(
      { bytes: reply.bytes ?? new Uint8Array(0), count: reply.count ?? 0 },
      reply.data as Float64Array,
    );
    snapshot.origin = this;
    return snapshot;
  }

  async scan(id: number, dir: string, dev: number, filter: string, size?: number): Promise<FolderScan> {
    const reply = await this.send(id, dir, dev, filter, size);
    return reply.scan as FolderScan;
  }

  private send(id: number, dir: string, dev: number, filter?: string, size?: number): Promise<ReaderReply> {
    return new Promise((resolve, reject) => {
      clearTimeout(this.idleTimer);
      if (this.jobs.size === 0) this.worker.ref();
      this.jobs.set(id, { dir, dev, resolve, reject });
      const job: ReaderMessage =
        filter === undefined
          ? { id, dir }
          : size === undefined
            ? { id, dir, filter }
            : { id, dir, filter, size };
      this.worker.postMessage(job);
    });
  }
}

export interface DirReaderOptions {
  /** Reader threads; 0 reads on the main thread only. */
  threads: number;
  io: AdaptiveIo;
  /** A thread with nothing to do for this long ends (default 10 s). */
  idleMs?: number;
  /**
   * Lists pinned folders in C when the native addon is loaded (default); false takes the
   * JavaScript ways below, which tests compare with it.
   */
  native?: boolean;
}

/**
 * Reads folders for listings and scans them for searches.
 *
 * A listing is read by the native addon where it is loaded (native.ts): one job on the thread
 * pool reads the pinned folder and stats every entry relative to the pin's descriptor, whatever
 * the device (the job blocks no thread of ours, and a slow device only keeps one pool thread
 * waiting). Without the addon, and for every search scan (whose name filter is JavaScript): on a
 * fast local file system the reading and stat'ing happen on a few worker threads, in parallel
 * with the main thread's own work (rules, types, JSON) for other requests; otherwise (a network
 * or FUSE file system, a device found slow, no worker available) on the main thread through
 * `AdaptiveIo`, synchronously in slices or through the thread pool.
 */
export class DirReader {
  private readonly threads: ReaderThread[] = [];
  private nextId = 1;
  private failures = 0;

  constructor(private readonly opts: DirReaderOptions) {}

  /**
   * The entries of a pinned folder. Read in C, the read holds a thread of libuv's pool until it
   * ends: a big folder's waits for a place of the pool's share for heavy work (`poolShare`),
   * fairly among `owner`s.
   */
  read(folder: Pinned, dev: number | bigint, owner = 'server'): Promise<DirSnapshot> {
    const dir = folder.path;
    if (this.opts.native !== false && folder.readsNatively) {
      const read = () => this.readInC(folder.nativeEntries()!, dir, dev);
      return isBigFolder(folder.stat) ? poolShare.run(owner, read) : read();
    }
    return this.onThread(
      dir,
      dev,
      (thread) => thread.read(this.nextId++, dir, Number(dev)),
      () => this.readHere(dir, dev),
    );
  }

  private async readInC(
    reading: Promise<FolderStats>,
    dir: string,
    dev: number | bigint,
  ): Promise<DirSnapshot> {
    const { names, count, data, ms } = await reading;
    // What the device took, as a reader thread reports it: other calls on it (header reads,
    // searches) go synchronously or through the pool by that.
    this.opts.io.observe(dev, dir, ms, count, { stall: false });
    return new DirSnapshot({ bytes: names, count }, data);
  }

  /**
   * A folder's entries for a search: sub-folders, links, and the names passing `filter`. On a reader thread the names are read, typed and
   * matched in parallel with the main thread and with each other, so only the few entries
   * worth a look come back.
   */
  scan(dir: string, dev: number | bigint, filter: PreparedNameFilter, size?: number): Promise<FolderScan> {
    return this.onThread(
      dir,
      dev,
      (thread) => thread.scan(this.nextId++, dir, Number(dev), filter.json, size),
      async () => pickEntries(await fsp.readdir(dir, { withFileTypes: true }), filter.keep),
    );
  }

  /** Whether `dev` counts as a fast local device now (what sends its folders to the threads). */
  isFast(dev: number | bigint, dir: string): Promise<boolean> {
    return this.opts.io.isFast(dev, dir);
  }

  private async onThread<T>(
    dir: string,
    dev: number | bigint,
    there: (thread: ReaderThread) => Promise<T>,
    here: () => Promise<T>,
  ): Promise<T> {
    if (this.opts.threads > 0 && (await this.opts.io.isFast(dev, dir))) {
      const thread = this.thread();
      if (thread) {
        try {
          return await there(thread);
        } catch (err) {
          if (!thread.dead) throw err; // the file system's answer (ENOENT, EACCES…)
          // The thread died: this folder is read again below, on the main thread.
        }
      }
    }
    return here();
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
          new ReaderThread(
            (job, ms, count) => this.opts.io.observe(job.dev, job.dir, ms, count, { stall: false }),
            this.opts.idleMs ?? 10_000,
          ),
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

  /** Live reader threads. */
  get threadCount(): number {
    return this.threads.filter((t) => !t.dead).length;
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
