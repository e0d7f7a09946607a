import type { Job, JobAction, JobState } from '@filebrowser/contract';
import type { Selectable } from 'kysely';
import type { JobsTable } from './schema.js';
import type { Sql } from './sql.js';

/** A job as the database keeps it: what the client sees, whose it is, and where it runs. */
export interface StoredJob {
  job: Job;
  userId: number;
  /** The folder of the request that started it, when that request was confined to one. */
  confinedTo: string | undefined;
  /** The instance doing the work. */
  instance: string;
  cancelRequested: boolean;
}

/** How far a job is: what its instance writes as it goes. */
export type JobProgress = Pick<Job, 'bytesDone' | 'bytesTotal' | 'itemsDone' | 'itemsTotal'>;

/**
 * The jobs of every instance on the database (jobs/registry.ts keeps the work itself): a job is
 * followed and cancelled from any instance, and one whose instance died is failed by another.
 */
export class JobsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly instance: string,
  ) {}

  /** Records a job this instance starts; false when the user has a job of that id already. */
  async add(userId: number, confinedTo: string | undefined, job: Job): Promise<boolean> {
    const added = await this.sql
      .insertInto('jobs')
      .values({
        user_id: userId,
        id: job.id,
        instance: this.instance,
        confined_to: confinedTo ?? null,
        action: job.action,
        state: job.state,
        items: JSON.stringify(job.items),
        destination: job.destination,
        bytes_done: job.bytesDone,
        bytes_total: job.bytesTotal,
        items_done: job.itemsDone,
        items_total: job.itemsTotal,
        started_at: job.startedAt,
        cancel_requested: 0,
      })
      .onConflict((oc) => oc.columns(['user_id', 'id']).doNothing())
      .executeTakeFirst();
    return Number(added.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * Writes how far a running job of this instance is; answers `on`, `cancel` (someone asked it
   * to stop) or `gone` (it is no longer running here: failed by another instance, which took this
   * one for dead, or its user deleted).
   */
  async progress(userId: number, id: string, p: JobProgress): Promise<'on' | 'cancel' | 'gone'> {
    const row = await this.sql
      .updateTable('jobs')
      .set({
        bytes_done: p.bytesDone,
        bytes_total: p.bytesTotal,
        items_done: p.itemsDone,
        items_total: p.itemsTotal,
      })
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .where('instance', '=', this.instance)
      .where('state', '=', 'running')
      .returning('cancel_requested')
      .executeTakeFirst();
    if (!row) return 'gone';
    return Number(row.cancel_requested) === 1 ? 'cancel' : 'on';
  }

  /** Writes how a job of this instance ended, unless another failed it first (taken for dead). */
  async end(userId: number, job: Job, now: number): Promise<void> {
    await this.sql
      .updateTable('jobs')
      .set({
        state: job.state,
        bytes_done: job.bytesDone,
        bytes_total: job.bytesTotal,
        items_done: job.itemsDone,
        items_total: job.itemsTotal,
        error: job.error ?? null,
        status: job.status ?? null,
        ended_at: now,
      })
      .where('user_id', '=', userId)
      .where('id', '=', job.id)
      .where('instance', '=', this.instance)
      .where('state', '=', 'running')
      .execute();
  }

  async get(userId: number, id: string): Promise<StoredJob | undefined> {
    const row = await this.sql
      .selectFrom('jobs')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && stored(row);
  }

  /** A user's running jobs, oldest first. */
  async running(userId: number): Promise<StoredJob[]> {
    const rows = await this.sql
      .selectFrom('jobs')
      .selectAll()
      .where('user_id', '=', userId)
      .where('state', '=', 'running')
      .orderBy('started_at')
      .orderBy('id')
      .execute();
    return rows.map(stored);
  }

  /** Asks a running job to stop (its instance hears it); false when it is not running. */
  async requestCancel(userId: number, id: string): Promise<boolean> {
    const done = await this.sql
      .updateTable('jobs')
      .set({ cancel_requested: 1 })
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  }

  /** This instance's running jobs someone asked to stop. */
  async cancelsHere(): Promise<Array<{ userId: number; id: string }>> {
    const rows = await this.sql
      .selectFrom('jobs')
      .select(['user_id', 'id'])
      .where('instance', '=', this.instance)
      .where('state', '=', 'running')
      .where('cancel_requested', '=', 1)
      .execute();
    return rows.map((r) => ({ userId: Number(r.user_id), id: r.id }));
  }

  /**
   * Fails the running jobs of every instance not in `live` (gone, their work with them), with
   * `error` and `status`; answers how many.
   */
  async failInstancesBut(
    live: readonly string[],
    error: string,
    status: number,
    now: number,
  ): Promise<number> {
    let query = this.sql
      .updateTable('jobs')
      .set({ state: 'failed', error, status, ended_at: now })
      .where('state', '=', 'running');
    if (live.length > 0) query = query.where('instance', 'not in', live);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  }

  /** Forgets a user's ended jobs but the `keep` that started last. */
  async prune(userId: number, keep: number): Promise<void> {
    const kept = this.sql
      .selectFrom('jobs')
      .select('id')
      .where('user_id', '=', userId)
      .where('state', '!=', 'running')
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(keep);
    await this.sql
      .deleteFrom('jobs')
      .where('user_id', '=', userId)
      .where('state', '!=', 'running')
      .where('id', 'not in', kept)
      .execute();
  }
}

function stored(row: Selectable<JobsTable>): StoredJob {
  const job: Job = {
    id: row.id,
    action: row.action as JobAction,
    state: row.state as JobState,
    items: JSON.parse(row.items) as string[],
    destination: row.destination,
    bytesDone: Number(row.bytes_done),
    bytesTotal: Number(row.bytes_total),
    itemsDone: Number(row.items_done),
    itemsTotal: Number(row.items_total),
    startedAt: Number(row.started_at),
  };
  if (row.error !== null) job.error = row.error;
  if (row.status !== null) job.status = Number(row.status);
  return {
    job,
    userId: Number(row.user_id),
    confinedTo: row.confined_to ?? undefined,
    instance: row.instance,
    cancelRequested: Number(row.cancel_requested) === 1,
  };
}
