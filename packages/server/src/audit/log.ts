import type { Logger } from '../context.js';
import type { AuditRecord, AuditRepo } from '../store/audit.js';

export interface AuditLogOptions {
  /** A batch this large is written at once (on the next turn of the event loop). */
  batchSize?: number;
  /** A smaller batch waits at most this long. */
  flushMs?: number;
  /** Records held while the database does not take them; the oldest go beyond this. */
  maxQueued?: number;
}

/**
 * The audit log's writer. Requests only queue their record: the insert happens later, a batch in
 * one transaction, so that no request waits on the database (the bench's listing and upload rows
 * must not move). The queue is bounded: if the database refuses writes for long, the oldest
 * records are dropped and the loss is logged once the database takes writes again.
 */
export class AuditLog {
  private queue: AuditRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private dropped = 0;
  private closed = false;
  private readonly batchSize: number;
  private readonly flushMs: number;
  private readonly maxQueued: number;

  constructor(
    private readonly repo: AuditRepo,
    private readonly log: Logger,
    opts: AuditLogOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 200;
    this.flushMs = opts.flushMs ?? 1000;
    this.maxQueued = opts.maxQueued ?? 20_000;
  }

  /** Queues a record; never throws, never waits. */
  record(record: AuditRecord): void {
    if (this.closed) {
      // A request finishing during shutdown, after the last flush: written now, as nothing follows.
      this.write([record]);
      return;
    }
    this.queue.push(record);
    if (this.queue.length > this.maxQueued) {
      this.queue.splice(0, this.queue.length - this.maxQueued);
      this.dropped++;
    }
    if (this.queue.length >= this.batchSize) {
      this.immediate ??= setImmediate(() => this.flush());
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes what is queued now. Readers of the log call it first, so that they see every record. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    if (!this.write(batch)) {
      // Kept for the next attempt, in order, ahead of what came since.
      this.queue = batch.concat(this.queue);
      if (this.queue.length > this.maxQueued) {
        this.dropped += this.queue.length - this.maxQueued;
        this.queue.splice(0, this.queue.length - this.maxQueued);
      }
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes the rest and takes later records one by one (the app is closing). */
  close(): void {
    this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.closed = true;
  }

  private write(batch: AuditRecord[]): boolean {
    try {
      this.repo.insertMany(batch);
    } catch (err) {
      this.log.error({ err, records: batch.length }, 'audit records could not be written');
      return false;
    }
    if (this.dropped > 0) {
      this.log.error(
        { dropped: this.dropped },
        'audit records were dropped while the database refused writes',
      );
      this.dropped = 0;
    }
    return true;
  }
}
