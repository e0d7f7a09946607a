import type { Logger } from '../context.js';
import { inBackground } from '../background.js';
import { LINE_BREAKING } from '../logging.js';
import type { AuditRecord, AuditRepo } from '../store/audit.js';
import { AnonymousRecords } from './anonymous.js';
import { RefusedRecords } from './refused.js';

export { ANONYMOUS_RECORDS_PER_ADDRESS } from './anonymous.js';

/**
 * The longest each text field of a record may be, in UTF-16 units: paths as long as a file system
 * takes them, names and details much shorter. Longer values are cut and end with "…".
 */
export const AUDIT_FIELD_LIMITS = {
  username: 256,
  address: 64,
  action: 32,
  path: 4096,
  destination: 4096,
  detail: 1024,
} as const;

/** A field as it is kept (a record read in a terminal, a log viewer or a CSV cell stays one line): controls and line separators replaced by U+FFFD (visible, and never one of a name's own characters), then cut. */
function bounded(value: string, limit: number): string {
  const clean = value.replace(LINE_BREAKING, '\uFFFD');
  if (clean.length <= limit) return clean;
  let cut = clean.slice(0, limit - 1);
  // Never half a surrogate pair.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return cut + '…';
}

/** The record as it may be stored: every text field bounded and free of control characters. */
export function boundedRecord(record: AuditRecord): AuditRecord {
  return {
    ...record,
    username: bounded(record.username, AUDIT_FIELD_LIMITS.username),
    address: bounded(record.address, AUDIT_FIELD_LIMITS.address),
    path: bounded(record.path, AUDIT_FIELD_LIMITS.path),
    destination: bounded(record.destination, AUDIT_FIELD_LIMITS.destination),
    detail: bounded(record.detail, AUDIT_FIELD_LIMITS.detail),
  };
}

export interface AuditLogOptions {
  /** A batch this large is written at once (on the next turn of the event loop). */
  batchSize?: number;
  /** A smaller batch waits at most this long. */
  flushMs?: number;
  /** Records held while the database does not take them; the oldest go beyond this. */
  maxQueued?: number;
}

/**
 * The audit log's writer, which every record goes through. Requests only queue their record: the
 * insert happens later, a batch in one transaction, so that no request waits on the database (the
 * bench's listing and upload rows must not move). The queue is bounded: if the database refuses
 * writes for long, the oldest records are dropped and the loss is logged once the database takes
 * writes again. Every field is bounded (`boundedRecord`), and records of requests nobody signed in
 * for are throttled per address and summed up when they flood (`AnonymousRecords`), and a signed-in
 * user's refused requests per user (`RefusedRecords`).
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
  private readonly anonymous = new AnonymousRecords();
  private readonly refused = new RefusedRecords();
  /** Ends the anonymous records' window when it holds counted records and nothing else does. */
  private summaryTimer: NodeJS.Timeout | undefined;

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
  record(record: AuditRecord, now = Date.now()): void {
    const { write, summaries } = (record.userId === 0 ? this.anonymous : this.refused).admit(record, now);
    for (const summary of summaries) this.enqueue(summary);
    if (write) this.enqueue(record);
    this.summaryDue();
  }

  /** Writes the summaries of the current window of anonymous records now (as when it ends). */
  private summarise(now = Date.now()): void {
    clearTimeout(this.summaryTimer);
    this.summaryTimer = undefined;
    for (const summary of [...this.anonymous.roll(now), ...this.refused.roll(now)]) this.enqueue(summary);
  }

  private summaryDue(): void {
    const ends = [this.anonymous.pendingUntil(), this.refused.pendingUntil()].filter(
      (t): t is number => t !== undefined,
    );
    const until = ends.length > 0 ? Math.min(...ends) : undefined;
    if (until === undefined || this.summaryTimer || this.closed) return;
    this.summaryTimer = setTimeout(() => this.summarise(), Math.max(0, until - Date.now()));
    this.summaryTimer.unref();
  }

  private enqueue(input: AuditRecord): void {
    const record = boundedRecord(input);
    if (this.closed) {
      // A request finishing during shutdown, after the last flush: written now, as nothing follows.
      this.writeSoon([record]);
      return;
    }
    this.queue.push(record);
    if (this.queue.length > this.maxQueued) {
      this.queue.splice(0, this.queue.length - this.maxQueued);
      this.dropped++;
    }
    if (this.queue.length >= this.batchSize) {
      this.immediate ??= setImmediate(() => this.flushSoon());
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flushSoon(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes what is queued now. Readers of the log call it first, so that they see every record. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    if (!(await this.write(batch))) {
      // Kept for the next attempt, in order, ahead of what came since.
      this.queue = batch.concat(this.queue);
      if (this.queue.length > this.maxQueued) {
        this.dropped += this.queue.length - this.maxQueued;
        this.queue.splice(0, this.queue.length - this.maxQueued);
      }
      this.timer = setTimeout(() => this.flushSoon(), this.flushMs);
      this.timer.unref();
    }
  }

  /** `flush` from a timer: `write` reports its own failures, so nothing is left to handle. */
  private flushSoon(): void {
    inBackground(this.flush(), (err) => this.log.error({ err }, 'audit records could not be written'));
  }

  private writeSoon(batch: AuditRecord[]): void {
    inBackground(this.write(batch), (err) => this.log.error({ err }, 'audit records could not be written'));
  }

  /** Writes the rest, summaries included, and takes later records one by one (the app is closing). */
  async close(): Promise<void> {
    this.summarise();
    await this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.closed = true;
  }

  private async write(batch: AuditRecord[]): Promise<boolean> {
    try {
      await this.repo.insertMany(batch);
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
