import os from 'node:os';
import { inBackground } from './background.js';
import type { ServerContext } from './services.js';
import type { InstanceRecord } from './store/instances.js';
import { moveJournalOf } from './files/change/moves.js';
import { stagingLedgerOf } from './files/change/staging.js';
import { INSTANCE_GONE } from './jobs/registry.js';

/** How often a running instance says so. */
export const BEAT_MS = 10_000;
/**
 * How long an instance may stay silent before the others take it for dead and finish or undo
 * what it left in progress: many beats, so that a busy or paused process is not taken for dead.
 */
export const DEAD_AFTER_MS = 120_000;

/** A pause between two of this instance's beats past which it was not beating (three beats missed). */
const BEAT_GAP_MS = 4 * BEAT_MS;

/**
 * This server among the servers on its database. It registers at start and beats while it serves;
 * what an instance that stopped beating left in progress (moves across file systems, staging
 * files) is finished or undone by one of the others, once (`store.exclusively`). On a SQLite file
 * one server process holds the database (server-lock.ts), so at start every other instance
 * recorded there is an earlier process that is gone.
 */
export class InstanceRegistry {
  /** When this instance's last beat went through (the database's time). */
  private lastBeat: number | undefined;
  /**
   * Since when this instance has beaten without a gap (undefined: from its start). An instance
   * that could not beat for a while (the database away, this process paused) cannot tell the
   * others' silence from its own: it takes none for dead before it has beaten for DEAD_AFTER_MS
   * again, so that after an outage the first instance back does not settle the running others.
   */
  private steadySince: number | undefined;

  constructor(private readonly ctx: ServerContext) {}

  private get id(): string {
    return this.ctx.store.instance.id;
  }

  /**
   * Registers this instance and settles what dead instances left, before the first request. Times
   * are the database's (`InstancesRepo.now`), never this host's against another's.
   */
  async start(at?: number): Promise<void> {
    const { store } = this.ctx;
    const now = at ?? (await store.instances.now());
    if (!store.instance.shared) {
      for (const other of await store.instances.list()) await store.instances.remove(other.id);
    }
    await store.instances.register(this.record(now));
    this.lastBeat = now;
    // Nobody could beat while the database was down: an instance silent since before it started
    // again is judged from then (a start just after an outage does not settle the running others).
    await this.settleDead(now, await store.instances.upSince());
  }

  /** Says this instance is running, then settles what dead ones left (one instance at a time). */
  async beat(at?: number): Promise<void> {
    const { store, log } = this.ctx;
    const now = at ?? (await store.instances.now());
    if (!(await store.instances.beat(this.id, now))) {
      // Silent for longer than DEAD_AFTER_MS (a stopped process, a lost database): another
      // instance may have undone what this one had in progress. It goes on as a new start would.
      log.warn({ instance: this.id }, 'this instance was taken for dead by another and registers again');
      await store.instances.register(this.record(now));
      // Its jobs were failed and their staging files removed: they stop here too (cancelled, not
      // awaited: a job ends once its work has cleaned up).
      inBackground(this.ctx.jobs.cancelAll(), () => undefined);
    }
    if (this.lastBeat !== undefined && now - this.lastBeat > BEAT_GAP_MS) this.steadySince = now;
    this.lastBeat = now;
    if (this.steadySince !== undefined && now - this.steadySince < DEAD_AFTER_MS) return;
    if (store.instance.shared) await store.exclusively('settle-dead', () => this.settleDead(now));
  }

  /** This instance's row, as it starts at `now`. */
  private record(now: number): InstanceRecord {
    return { id: this.id, host: os.hostname(), pid: process.pid, startedAt: now, seenAt: now };
  }

  /** Leaves the registry (a graceful stop: nothing of this instance is in progress any more). */
  async stop(): Promise<void> {
    await this.ctx.store.instances.remove(this.id);
  }

  /**
   * Finishes or undoes the moves, removes the staging files, forgets the quota reservations and
   * fails the jobs of every instance that is not running (`live`: this one and those heard from within DEAD_AFTER_MS), then forgets the dead.
   */
  private async settleDead(now: number, upSince = 0): Promise<void> {
    const { store, log } = this.ctx;
    const instances = await store.instances.list();
    const live = new Set([this.id]);
    for (const i of instances) if (Math.max(i.seenAt, upSince) >= now - DEAD_AFTER_MS) live.add(i.id);
    await moveJournalOf(store, log).recover([...live]);
    await stagingLedgerOf(store).sweep(log, [...live]);
    // Their writes in progress ended with them: what those held back from the quotas is free.
    await store.reservations.forgetInstancesBut([...live]);
    await store.reservations.forgetCreationsOfInstancesBut([...live]);
    await store.uploadCreations.forgetInstancesBut([...live]);
    // So did their jobs: failed, for whoever follows them on any instance.
    const { error, status } = INSTANCE_GONE;
    if ((await store.jobs.failInstancesBut([...live], error, status, now)) > 0) {
      await store.notices.publish('jobs');
      // This instance is not told its own notices: requests here waiting for those ends wake too.
      await this.ctx.jobs.heard();
    }
    for (const i of instances) {
      if (live.has(i.id)) continue;
      log.info(
        { instance: i.id, host: i.host, pid: i.pid },
        'an instance stopped beating: what it left was settled',
      );
      await store.instances.remove(i.id);
    }
  }
}
