import { EventEmitter } from 'node:events';
import { threadPoolSize } from './config/defaults.js';
import { AppError } from './errors.js';

/**
 * The one scheduler of heavy work: big listings, PROPFIND of big folders, searches, archives and
 * previews. Sixteen parallel listings of a 100,000-entry folder by one user used to take another
 * user's 11-byte download from 4 ms to 3 s: every request ran at once, sharing the event loop and
 * the thread pool with everyone's small ones.
 *
 * Each owner (a user; the address of an anonymous client) runs at most `perOwner` tasks at once,
 * and at most `slots` run over all owners. Tasks past an owner's bound wait in that owner's queue,
 * at most `queuePerOwner` of them; one more is refused at once with 429 and `Retry-After`, so one
 * client cannot pile up work (and memory) without end. A free slot goes to the owners with
 * waiting tasks in turn (round robin), not to the oldest task, so one owner's long queue never
 * holds back another's single task. A waiting task whose signal aborts (its client left) leaves
 * the queue.
 *
 * Events (the tests follow the scheduler by them, never by a clock): `queued`, `started` and
 * `left` with the owner, when a task waits, starts, or leaves the queue (its signal aborted);
 * `idle` when the last task running ends with none waiting (the end of a burst).
 */
export interface SchedulerOptions {
  /** Tasks running at once over all owners (Infinity: no bound but the owners'). */
  slots: number;
  /** Tasks of one owner running at once. */
  perOwner: number;
  /** Tasks of one owner waiting at once; past it, 429. */
  queuePerOwner: number;
  /** What a refusal says (and `Retry-After`, in seconds). */
  refusal?: { message: string; retryAfterSeconds: number };
}

interface Waiting {
  go(): void;
}

interface Owner {
  running: number;
  waiting: Waiting[];
}

export class FairScheduler extends EventEmitter<{
  queued: [string];
  started: [string];
  left: [string];
  idle: [];
}> {
  private readonly owners = new Map<string, Owner>();
  /** Owners with waiting tasks, in the order they get the next free slot. */
  private readonly turns: string[] = [];
  private running = 0;

  constructor(private readonly opts: SchedulerOptions) {
    super();
  }

  /** Tasks running now (all owners, or one). */
  runningCount(owner?: string): number {
    return owner === undefined ? this.running : (this.owners.get(owner)?.running ?? 0);
  }

  /** Tasks waiting now (all owners, or one). */
  waitingCount(owner?: string): number {
    if (owner !== undefined) return this.owners.get(owner)?.waiting.length ?? 0;
    let n = 0;
    for (const o of this.owners.values()) n += o.waiting.length;
    return n;
  }

  /**
   * Waits for a turn of `owner` and answers the function that ends it (call it exactly once, when
   * the work is over: for a streamed answer, when the response has closed). Rejects with 429 when
   * the owner's queue is full, and with the signal's reason when it aborts while waiting.
   */
  async admit(owner: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const o = this.ownerOf(owner);
    if (o.waiting.length === 0 && this.mayStart(o)) {
      this.start(owner, o);
      return this.ender(owner, o);
    }
    if (o.waiting.length >= this.opts.queuePerOwner) {
      this.forget(owner, o);
      const refusal = this.opts.refusal ?? {
        message: 'too many requests of this kind at once: wait for one to end',
        retryAfterSeconds: 1,
      };
      throw new AppError('too_many_requests', refusal.message, {
        'Retry-After': String(refusal.retryAfterSeconds),
      });
    }
    await new Promise<void>((resolve, reject) => {
      const waiting: Waiting = {
        go: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = o.waiting.indexOf(waiting);
        if (at >= 0) o.waiting.splice(at, 1);
        if (o.waiting.length === 0) this.dropTurn(owner);
        this.forget(owner, o);
        this.emit('left', owner);
        reject(signal!.reason);
      };
      o.waiting.push(waiting);
      if (!this.turns.includes(owner)) this.turns.push(owner);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.emit('queued', owner);
    });
    return this.ender(owner, o);
  }

  /** Runs `task` in a turn of `owner` (see `admit`). */
  async run<T>(owner: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const end = await this.admit(owner, signal);
    try {
      return await task();
    } finally {
      end();
    }
  }

  private ownerOf(owner: string): Owner {
    let o = this.owners.get(owner);
    if (!o) {
      o = { running: 0, waiting: [] };
      this.owners.set(owner, o);
    }
    return o;
  }

  private mayStart(o: Owner): boolean {
    return this.running < this.opts.slots && o.running < this.opts.perOwner;
  }

  private start(owner: string, o: Owner): void {
    o.running++;
    this.running++;
    this.emit('started', owner);
  }

  private ender(owner: string, o: Owner): () => void {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      o.running--;
      this.running--;
      this.next();
      this.forget(owner, o);
      if (this.running === 0 && this.turns.length === 0) this.emit('idle');
    };
  }

  /** Gives free slots to waiting owners in turn: each gets one, then goes to the back. */
  private next(): void {
    let tried = 0;
    while (this.running < this.opts.slots && tried < this.turns.length) {
      const owner = this.turns.shift()!;
      const o = this.owners.get(owner)!;
      if (o.running >= this.opts.perOwner) {
        this.turns.push(owner);
        tried++;
        continue;
      }
      tried = 0;
      const waiting = o.waiting.shift()!;
      if (o.waiting.length > 0) this.turns.push(owner);
      this.start(owner, o);
      waiting.go();
    }
  }

  private dropTurn(owner: string): void {
    const at = this.turns.indexOf(owner);
    if (at >= 0) this.turns.splice(at, 1);
  }

  /** An owner with nothing running or waiting is forgotten (a client's address is no key to keep). */
  private forget(owner: string, o: Owner): void {
    if (o.running === 0 && o.waiting.length === 0) this.owners.delete(owner);
  }
}

/**
 * A folder whose entries take this much room on the disk is listed as heavy work: some 8,000 to
 * 13,000 entries on ext4, xfs, btrfs and tmpfs, whose folder sizes grow with their entries. Known
 * before the folder is read, from the stat its path gave; a smaller folder is listed at once.
 */
export const BIG_FOLDER_BYTES = 256 * 1024;

/** Whether listing what `stat` describes is heavy work (see `BIG_FOLDER_BYTES`). */
export function isBigFolder(stat: { isDirectory(): boolean; size: number | bigint }): boolean {
  return stat.isDirectory() && Number(stat.size) >= BIG_FOLDER_BYTES;
}

/**
 * Heavy jobs on libuv's thread pool at once, over the whole process (the pool is the process's):
 * big folders read in C (a 100,000-entry folder holds a pool thread for its whole read) and
 * image resizes; a small folder's read, as short as a stat, goes at once. Two pool threads stay free for every request's small file operations (an open, a
 * stat, a read of a download), which would otherwise queue behind them. A free place goes to the
 * owners with jobs waiting in turn.
 */
export const poolShare = new FairScheduler({
  slots: Math.max(1, threadPoolSize() - 2),
  perOwner: Infinity,
  queuePerOwner: Infinity,
});

/** Continuations of heavy work waiting for their turn of the event loop (see `loopTurn`). */
const turnsOfLoop: Array<() => void> = [];
let turnArmed = false;

function nextTurnOfLoop(): void {
  turnArmed = false;
  const go = turnsOfLoop.shift();
  if (turnsOfLoop.length > 0) armTurnOfLoop();
  go?.();
}

function armTurnOfLoop(): void {
  if (turnArmed) return;
  turnArmed = true;
  setImmediate(nextTurnOfLoop);
}

/**
 * Where heavy work on the main thread (a big listing's sorting and rendering, a PROPFIND's
 * answer) lets other requests go: resolves in a later turn of the event loop, and of all the
 * heavy work waiting at that moment only one piece goes on per turn, so between any two pieces
 * the loop has looked for I/O. However many big listings run, a small request waits for one
 * piece, not for a piece of each.
 */
export function loopTurn(): Promise<void> {
  return new Promise((resolve) => {
    turnsOfLoop.push(resolve);
    armTurnOfLoop();
  });
}
