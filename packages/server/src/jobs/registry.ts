import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import { MAX_RUNNING_JOBS_PER_USER, type Job, type JobAction, type JobState } from '@filebrowser/contract';
import { AppError, conflict, fromSystemError } from '../errors.js';
import type { Caller } from '../auth/caller.js';
import { inBackground } from '../background.js';
import type { Logger } from '../context.js';
import type { Measure } from '../files/access/tree.js';
import type { Store } from '../store/index.js';
import { inTurn, type Turns } from '../store/in-turn.js';
import { storedOrLater } from '../store/until-stored.js';
import type { StoredJob } from '../store/jobs.js';

/** Finished jobs kept per user so that a client can still read how one ended. */
const KEEP_FINISHED = 20;

/**
 * How often a running job writes how far it is, for the other instances to read: each step of
 * the work is counted at once in this instance, and seen elsewhere at most this late.
 */
const SAVE_EVERY_MS = 500;

/** How a job of an instance that died ends, told as a failed PATCH would be. */
export const INSTANCE_GONE = {
  status: 503,
  error: '503 Service Unavailable (the server running the job stopped: what it had finished stays)',
};

/**
 * Whose a job is: a user, and the folder the request that started it was confined to (an API
 * token limited to one folder), whose paths the job's items are written in.
 */
export interface JobOwner {
  id: number;
  confinedTo?: string;
}

/** A job while it is known: what the client sees, who owns it, and how to stop it. */
export interface JobRecord {
  readonly job: Job;
  readonly userId: number;
  /** The folder of the request that started it, when that request was confined to one. */
  readonly confinedTo: string | undefined;
  /**
   * Who started it, asked again as the work goes (auth/caller.ts): the job acts as this caller is
   * now, never as the user was when it started.
   */
  readonly caller: Caller;
  /**
   * Aborted by a cancel (or when the server closes), or by a refused check of the caller (its
   * reason is then the refusal): the work stops and cleans up after itself.
   */
  readonly signal: AbortSignal;
  /**
   * Counts work done (bytes of files, entries), then asks the caller again: a refusal (a session
   * ended, a token revoked, the user deleted, a permission withdrawn, the scope or rules changed)
   * aborts the work before its next read or entry, and the job fails with it: the work awaits
   * the answer before it goes on.
   */
  advance(bytes: number, items: number): Promise<void>;
  /** Sets the totals counted before the work started. */
  measured(m: Measure): void;
  /** Records how the work ended; a job whose signal aborted ended `cancelled`, whatever threw. */
  finish(error?: unknown): void;
  /** Stops a running job; a finished one stays as it ended. */
  cancel(): void;
  /** Settles once the job has ended and cleaned up after itself. */
  readonly ended: Promise<Job>;
}

export interface JobStartOptions {
  action: JobAction;
  items: string[];
  destination: string;
  /** The client's id (a download's `progress=`); the server picks one otherwise. */
  id?: string;
}

/**
 * The jobs of the server. The work of a job runs in the instance that started it, which keeps it
 * in memory (`here`), counts its progress there at once and writes it to the database as it goes
 * (store/jobs.ts), where every instance on the database reads it (`find`, `running`) and asks it
 * to stop (`cancel`: a flag the running instance hears through a notice, or reads with its next
 * progress). A job whose instance died is failed by the instance that settles what it left
 * (instances.ts). Each belongs to one user; another user's job does not exist for them, and
 * neither does, for a request confined to a folder, a job started from outside that folder
 * (`visible`): a folder token sees and cancels only the jobs of its own folder.
 * Emits `progress` and `finished` with the job (tests and logs follow work by these events).
 */
export class JobRegistry extends EventEmitter<{ progress: [Job]; finished: [Job] }> {
  private readonly byUser = new Map<number, Map<string, JobRecord>>();
  /** Starts, one at a time across the instances (the running jobs are counted, then one is added). */
  private readonly turns: Turns;
  /** Who waits for a job of another instance to end: woken when another instance says so. */
  private waiters: Array<() => void> = [];

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    super();
    this.turns = inTurn(store.lockLine);
    store.notices.on('jobs', () => this.heard());
  }

  /**
   * Jobs changed elsewhere (another instance said so, or this one failed a dead one's): cancels
   * asked of this instance, and the ends of other instances' jobs that requests here wait for.
   */
  async heard(): Promise<void> {
    for (const wake of this.waiters.splice(0)) wake();
    for (const { userId, id } of await this.store.jobs.cancelsHere())
      this.byUser.get(userId)?.get(id)?.cancel();
  }

  /** Starts a job of `caller`: 429 past the running jobs a user may have, 409 for an id in use. */
  start(caller: Caller, opts: JobStartOptions): Promise<JobRecord> {
    return this.turns(`jobs:${caller.userId}`, () => this.begin(caller, opts));
  }

  private async begin(caller: Caller, opts: JobStartOptions): Promise<JobRecord> {
    const { userId } = caller;
    const store = this.store;
    if ((await store.jobs.running(userId)).length >= MAX_RUNNING_JOBS_PER_USER) {
      throw new AppError(
        'too_many_requests',
        `at most ${MAX_RUNNING_JOBS_PER_USER} jobs may run at once; wait for one to end or cancel one`,
      );
    }
    const jobs = this.byUser.get(userId) ?? new Map<string, JobRecord>();
    this.byUser.set(userId, jobs);
    const id = opts.id ?? crypto.randomBytes(12).toString('base64url');
    const job: Job = {
      id,
      action: opts.action,
      state: 'running',
      items: opts.items,
      destination: opts.destination,
      bytesDone: 0,
      bytesTotal: 0,
      itemsDone: 0,
      itemsTotal: 0,
      startedAt: Date.now(),
    };
    if (!(await store.jobs.add(userId, caller.confinedTo, job))) throw conflict('a job with this id exists');
    const abort = new AbortController();
    /** What a cancel aborts with: anything else the signal carries is a refusal of the caller. */
    const cancelled = new Error('the job was cancelled');
    let ended!: (job: Job) => void;
    const endedPromise = new Promise<Job>((resolve) => (ended = resolve));
    // Written for the other instances at most every SAVE_EVERY_MS, and what came within one
    // window at its end (a job stalled after a step is seen where it stopped). The answer says
    // whether one of them asked the job to stop, or failed it (its instance taken for dead).
    let savedAt = 0;
    let trailing: NodeJS.Timeout | undefined;
    const save = async (force = false) => {
      const now = Date.now();
      if (!force && now - savedAt < SAVE_EVERY_MS) {
        trailing ??= setTimeout(
          () => {
            trailing = undefined;
            if (job.state === 'running') inBackground(save(true), () => undefined);
          },
          SAVE_EVERY_MS - (now - savedAt),
        ).unref();
        return;
      }
      savedAt = now;
      const go = await store.jobs.progress(userId, id, job).catch((err: unknown) => {
        this.log.warn({ err, job: id }, 'the progress of a job could not be written');
        return 'on' as const;
      });
      if (go !== 'on') record.cancel();
    };
    const end = (state: JobState, error?: string, status?: number) => {
      if (job.state !== 'running') return;
      job.state = state;
      if (error) job.error = error;
      if (status) job.status = status;
      if (state === 'done') {
        // Renames within one file system report nothing while they happen.
        job.bytesDone = Math.max(job.bytesDone, job.bytesTotal);
        job.itemsDone = Math.max(job.itemsDone, job.itemsTotal);
      }
      clearTimeout(trailing);
      this.prune(jobs);
      this.emit('finished', { ...job });
      // Ended once every instance can read so: written again after an outage until it is (a
      // row left running would count against the user's jobs, and keep a cancel waiting, for ever).
      const endedAt = Date.now();
      const told = async () => {
        await store.jobs.end(userId, job, endedAt);
        await store.jobs.prune(userId, KEEP_FINISHED);
        await store.notices.publish('jobs');
      };
      const warn = (err: unknown) => this.log.warn({ err, job: id }, 'the end of a job could not be written');
      inBackground(
        storedOrLater(store, told, warn).finally(() => ended({ ...job })),
        warn,
      );
    };
    const record: JobRecord = {
      job,
      ended: endedPromise,
      userId,
      confinedTo: caller.confinedTo,
      caller,
      signal: abort.signal,
      advance: async (bytes, items) => {
        job.bytesDone += bytes;
        job.itemsDone += items;
        this.emit('progress', { ...job });
        if (abort.signal.aborted) return;
        try {
          await caller.now();
        } catch (err) {
          abort.abort(err);
          return;
        }
        await save();
      },
      measured: (m) => {
        job.bytesTotal = m.bytes;
        job.itemsTotal = m.items;
        this.emit('progress', { ...job });
        inBackground(save(true), () => undefined);
      },
      finish: (error) => {
        if (abort.signal.aborted && abort.signal.reason === cancelled) return end('cancelled');
        // A refused check of the caller ends the job with that refusal, whatever the work threw.
        if (abort.signal.aborted) error = abort.signal.reason as unknown;
        if (error === undefined) return end('done');
        // Told as the PATCH route's plain-text answer would tell it: "409 Conflict (why)".
        const e = fromSystemError(error);
        const status = e?.status ?? 500;
        const reason = `${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
        end('failed', e?.told && e.message ? `${reason} (${e.message})` : reason, status);
      },
      cancel: () => {
        if (job.state === 'running' && !abort.signal.aborted) abort.abort(cancelled);
      },
    };
    jobs.set(id, record);
    return record;
  }

  /**
   * The caller's job when this instance runs (or ran) it, or undefined (also for another user's,
   * or one out of the caller's folder).
   */
  here(caller: JobOwner, id: string): JobRecord | undefined {
    const record = this.byUser.get(caller.id)?.get(id);
    return record && visible(record, caller) ? record : undefined;
  }

  /** The caller's running jobs in this instance, oldest first. */
  runningHere(caller: JobOwner): Job[] {
    return [...(this.byUser.get(caller.id)?.values() ?? [])]
      .filter((r) => r.job.state === 'running' && visible(r, caller))
      .map((r) => r.job);
  }

  /** The caller's job, whichever instance runs (or ran) it. */
  async find(caller: JobOwner, id: string): Promise<Job | undefined> {
    const record = this.here(caller, id);
    if (record) return { ...record.job };
    const stored = await this.store.jobs.get(caller.id, id);
    return stored && visible(stored, caller) ? stored.job : undefined;
  }

  /** The caller's running jobs on every instance, oldest first (this instance's as they are now). */
  async running(caller: JobOwner): Promise<Job[]> {
    const mine = this.byUser.get(caller.id);
    return (await this.store.jobs.running(caller.id))
      .filter((stored) => visible(stored, caller))
      .map((stored) => mine?.get(stored.job.id)?.job ?? stored.job)
      .filter((job) => job.state === 'running')
      .map((job) => ({ ...job }));
  }

  /**
   * Stops the caller's job, whichever instance runs it, and answers it once it has ended and
   * cleaned up after itself (undefined: no such job); a finished one stays as it ended.
   */
  async cancel(caller: JobOwner, id: string): Promise<Job | undefined> {
    const record = this.here(caller, id);
    if (record) {
      record.cancel();
      return record.ended;
    }
    const stored = await this.store.jobs.get(caller.id, id);
    if (!stored || !visible(stored, caller)) return undefined;
    if (!(await this.store.jobs.requestCancel(caller.id, id))) return stored.job;
    await this.store.notices.publish('jobs');
    return this.endOf(stored);
  }

  /** A job of another instance once it has ended (told by a notice), or as last read if it is gone. */
  private async endOf(stored: StoredJob): Promise<Job> {
    let last = stored.job;
    for (;;) {
      const woken = new Promise<void>((resolve) => this.waiters.push(resolve));
      const now = await this.store.jobs.get(stored.userId, last.id);
      if (!now) return { ...last, state: last.state === 'running' ? 'cancelled' : last.state };
      if (now.job.state !== 'running') return now.job;
      last = now.job;
      await woken;
    }
  }

  /**
   * Stops every running job and waits until they have cleaned up (the server is closing, or this
   * instance was taken for dead and its jobs failed by another).
   */
  async cancelAll(): Promise<void> {
    const records = [...this.byUser.values()].flatMap((jobs) => [...jobs.values()]);
    for (const r of records) r.cancel();
    await Promise.all(records.map((r) => r.ended));
  }

  private prune(jobs: Map<string, JobRecord>): void {
    const finished = [...jobs.values()].filter((r) => r.job.state !== 'running');
    for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) jobs.delete(r.job.id);
  }
}

/**
 * A request for the whole account sees every job of its user; a request confined to a folder
 * sees only the jobs started in that very folder (their items are paths of that folder's view).
 */
function visible(record: { confinedTo: string | undefined }, caller: JobOwner): boolean {
  return caller.confinedTo === undefined || record.confinedTo === caller.confinedTo;
}
