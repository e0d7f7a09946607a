import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import { MAX_RUNNING_JOBS_PER_USER, type Job, type JobAction, type JobState } from '@filebrowser/contract';
import { AppError, conflict, fromSystemError } from '../errors.js';
import type { Caller } from '../auth/caller.js';
import type { Measure } from '../files/access/tree.js';

/** Finished jobs kept per user so that a client can still read how one ended. */
const KEEP_FINISHED = 20;

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
 * The jobs of one server instance, in memory: lost when it stops, not shared between instances
 * behind one address. Each belongs to one user; another user's job does not exist for them, and
 * neither does, for a request confined to a folder, a job started from outside that folder
 * (`visible`): a folder token sees and cancels only the jobs of its own folder.
 * Emits `progress` and `finished` with the job (tests and logs follow work by these events).
 */
export class JobRegistry extends EventEmitter<{ progress: [Job]; finished: [Job] }> {
  private readonly byUser = new Map<number, Map<string, JobRecord>>();

  start(caller: Caller, opts: JobStartOptions): JobRecord {
    const { userId } = caller;
    const jobs = this.byUser.get(userId) ?? new Map<string, JobRecord>();
    this.byUser.set(userId, jobs);
    const running = [...jobs.values()].filter((r) => r.job.state === 'running').length;
    if (running >= MAX_RUNNING_JOBS_PER_USER) {
      throw new AppError(
        'too_many_requests',
        `at most ${MAX_RUNNING_JOBS_PER_USER} jobs may run at once; wait for one to end or cancel one`,
      );
    }
    const id = opts.id ?? crypto.randomBytes(12).toString('base64url');
    if (jobs.has(id)) throw conflict('a job with this id exists');
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
    const abort = new AbortController();
    /** What a cancel aborts with: anything else the signal carries is a refusal of the caller. */
    const cancelled = new Error('the job was cancelled');
    let ended!: (job: Job) => void;
    const endedPromise = new Promise<Job>((resolve) => (ended = resolve));
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
      this.prune(jobs);
      ended({ ...job });
      this.emit('finished', { ...job });
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
        }
      },
      measured: (m) => {
        job.bytesTotal = m.bytes;
        job.itemsTotal = m.items;
        this.emit('progress', { ...job });
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

  /** The caller's job, or undefined (also for another user's, or one out of the caller's folder). */
  get(caller: JobOwner, id: string): JobRecord | undefined {
    const record = this.byUser.get(caller.id)?.get(id);
    return record && visible(record, caller) ? record : undefined;
  }

  /** The caller's running jobs, oldest first. */
  running(caller: JobOwner): Job[] {
    return [...(this.byUser.get(caller.id)?.values() ?? [])]
      .filter((r) => r.job.state === 'running' && visible(r, caller))
      .map((r) => r.job);
  }

  /** Stops every running job and waits until they have cleaned up (the server is closing). */
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
function visible(record: JobRecord, caller: JobOwner): boolean {
  return caller.confinedTo === undefined || record.confinedTo === caller.confinedTo;
}
