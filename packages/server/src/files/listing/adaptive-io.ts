import fsp from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * Synchronous file-system calls while they are cheap, the thread pool when they might not be.
 *
 * A listing does one `lstat` (and sometimes a 512-byte header read) per entry. Through the thread
 * pool every call costs a promise, a queue hop and a wake-up, several times the call itself when
 * the metadata is cached (a cached lstat takes 1-2 µs); synchronous calls skip all of that. But a
 * synchronous call blocks the whole server for as long as the file system takes to answer, which
 * on a network mount, a FUSE file system or a cold spinning disk can be milliseconds to seconds.
 * So each device (st_dev) decides which way its calls go:
 *
 * - only file systems known to be local (ext4, xfs, btrfs, tmpfs, overlay, zfs, …; asked once per
 *   device with `statfs`) are ever called synchronously; network, FUSE and unknown ones always
 *   use the thread pool, so a hung NFS server can never stall the event loop;
 * - synchronous calls run in slices of at most `sliceMs`, with a turn of the event loop between
 *   slices, so a huge folder does not hold up other requests;
 * - slices that need more than `slowCallMs` per call on average (the cache went cold, the disk is
 *   busy) `strikes` times in a row, or one slice that takes `stallMs`, mark the device slow: the
 *   rest of the work, and every call on that device for the next `cooldownMs`, goes through the
 *   thread pool, with bounded concurrency, where slow calls wait side by side instead of in turn.
 */

/** `statfs` magic numbers of Linux file systems that live on this machine (linux/magic.h). */
const LOCAL_FS_TYPES = new Set<number>([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0xca451a4e, // bcachefs
  0x3153464a, // jfs
  0x52654973, // reiserfs
  0x3434, // nilfs2
  0x4d44, // vfat, msdos
  0x2011bab0, // exfat
  0x7366746e, // ntfs3
  0x482b, // hfsplus
  0x73717368, // squashfs
  0xe0f5e1e2, // erofs
  0x9660, // iso9660
  0x15013346, // udf
]);

export interface AdaptiveIoOptions {
  /** Longest stretch of synchronous calls before the event loop gets a turn. */
  sliceMs: number;
  /** Average time per call above which a device counts as slow. */
  slowCallMs: number;
  /**
   * Slow slices in a row that mark the device slow: one alone may be a garbage collection or the
   * thread losing its core, not the file system.
   */
  strikes: number;
  /** A slice this long marks the device slow at once. */
  stallMs: number;
  /** How long a slow device stays on the thread pool. */
  cooldownMs: number;
  /** Calls in flight on the thread pool, per batch. */
  concurrency: number;
  /** Milliseconds, monotonic. */
  now: () => number;
  /** Whether the file system holding `dir` may be called synchronously. */
  isLocal: (dir: string) => Promise<boolean>;
  /** Gives the event loop a turn between slices. */
  yieldToLoop: () => Promise<unknown>;
}

/** Local when `statfs` names a known local file system; anything else (or an error) is not. */
export async function isLocalFileSystem(dir: string): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  try {
    const { type } = await fsp.statfs(dir);
    return LOCAL_FS_TYPES.has(type >>> 0);
  } catch {
    return false;
  }
}

const DEFAULTS: AdaptiveIoOptions = {
  sliceMs: 4,
  // A call served from the caches takes 1-20 µs (an lstat; a header read is an open, a read and a
  // close); one that waits for a disk takes milliseconds. At 50 µs, a busy 2-core machine (the
  // thread losing its core for a few milliseconds in three slices in a row) sent a listing of
  // freshly written files to the thread pool for 30 s, at a fifth of the speed.
  slowCallMs: 0.25,
  strikes: 3,
  stallMs: 100,
  cooldownMs: 30_000,
  concurrency: 32,
  now: () => performance.now(),
  isLocal: isLocalFileSystem,
  yieldToLoop: () => yieldToLoop(),
};

interface DeviceState {
  local: Promise<boolean>;
  /** `now()` until which calls go through the thread pool. */
  slowUntil: number;
  /** Slow slices in a row. */
  strikes: number;
}

/** How the calls of one batch went, for tests and logs. */
export interface BatchReport {
  sync: number;
  async: number;
  /** The batch found the device slow and moved to the thread pool. */
  markedSlow: boolean;
}

export class AdaptiveIo {
  private readonly opts: AdaptiveIoOptions;
  private readonly devices = new Map<number, DeviceState>();

  constructor(opts: Partial<AdaptiveIoOptions> = {}) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  private device(device: number | bigint, dir: string): DeviceState {
    const dev = Number(device);
    let state = this.devices.get(dev);
    if (!state) {
      state = { local: this.opts.isLocal(dir).catch(() => false), slowUntil: 0, strikes: 0 };
      // Devices come and go (mounts); a few hundred entries are plenty for any machine.
      if (this.devices.size >= 256) this.devices.clear();
      this.devices.set(dev, state);
    }
    return state;
  }

  /** Whether calls on `dev` currently go synchronously. */
  async isFast(dev: number | bigint, dir: string): Promise<boolean> {
    const state = this.device(dev, dir);
    return (await state.local) && this.opts.now() >= state.slowUntil;
  }

  /** Counts a stretch of `calls` synchronous calls that took `elapsedMs`; true when it made the device slow. */
  private judge(state: DeviceState, elapsedMs: number, calls: number, stall = true): boolean {
    const { sliceMs, slowCallMs, strikes, stallMs, cooldownMs, now } = this.opts;
    if (elapsedMs < sliceMs) return false;
    if (elapsedMs <= calls * slowCallMs) {
      state.strikes = 0;
      return false;
    }
    if (++state.strikes < strikes && (!stall || elapsedMs < stallMs)) return false;
    state.strikes = 0;
    state.slowUntil = now() + cooldownMs;
    return true;
  }

  /**
   * Synchronous calls made elsewhere (a reader thread) on `dev`: `calls` calls in `elapsedMs`.
   * Slow ones send the device to the thread pool like slow slices here do. With `stall: false`
   * one long stretch is a strike only, never slow at once: a reader thread blocks no event loop,
   * and a long stretch there is more often the thread waiting for V8's helper threads or for a
   * core than the disk (bench/results/2026-11-23-first-full-runs-and-where-the-time-went.md).
   */
  observe(
    dev: number | bigint,
    dir: string,
    elapsedMs: number,
    calls: number,
    opts: { stall?: boolean } = {},
  ): void {
    this.judge(this.device(dev, dir), elapsedMs, calls, opts.stall ?? true);
  }

  /**
   * `out[i] = sync(items[i])` while the device answers fast, `await viaPool(items[i])` otherwise;
   * the order of `out` is the order of `items`. `sync` and `viaPool` must do the same thing and
   * must not throw (return a marker for failures instead).
   */
  async map<T, R>(
    dev: number | bigint,
    dir: string,
    items: readonly T[],
    sync: (item: T) => R,
    viaPool: (item: T) => Promise<R>,
    report?: (r: BatchReport) => void,
  ): Promise<R[]> {
    const out = new Array<R>(items.length);
    const result: BatchReport = { sync: 0, async: 0, markedSlow: false };
    if (items.length === 0) return out;
    const state = this.device(dev, dir);
    const { now, sliceMs } = this.opts;
    let i = 0;
    if (await state.local) {
      while (i < items.length && now() >= state.slowUntil) {
        const start = now();
        let calls = 0;
        let elapsed = 0;
        while (i < items.length) {
          out[i] = sync(items[i] as T);
          i++;
          calls++;
          // Reading the clock costs more than a cached lstat's overhead: look every few calls.
          if ((calls & 7) === 0 || i === items.length) {
            elapsed = now() - start;
            if (elapsed >= sliceMs) break;
          }
        }
        result.sync += calls;
        if (this.judge(state, elapsed, calls)) {
          result.markedSlow = true;
          break;
        }
        if (i < items.length) await this.opts.yieldToLoop();
      }
    }
    if (i < items.length) {
      const rest = items.slice(i);
      const done = await mapLimit(rest, this.opts.concurrency, viaPool);
      for (let k = 0; k < done.length; k++) out[i + k] = done[k] as R;
      result.async = rest.length;
    }
    report?.(result);
    return out;
  }
}

/** Runs `fn` over `inputs` with at most `limit` in flight, keeping the input order. */
export async function mapLimit<T, R>(
  inputs: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(inputs.length);
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const i = next++;
      out[i] = await fn(inputs[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, worker));
  return out;
}

/** The process-wide instance: what it learns about devices is shared by every request. */
export const adaptiveIo = new AdaptiveIo();
