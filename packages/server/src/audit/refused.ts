import type { AuditRecord } from '../store/audit.js';

/** Refused requests of one user written one by one per window; past it they are counted. */
export const REFUSED_RECORDS_PER_USER = 60;
/** The window: a minute. */
const WINDOW_MS = 60_000;

interface Counted {
  sample: AuditRecord;
  count: number;
}

/**
 * A signed-in caller (a read-only token too) can send refused requests as fast as the network
 * carries them, each with a long path, and each is worth a record. So that they cannot fill the
 * database, a user's records of refused requests (status 400 and above: nothing changed) are
 * written one by one up to sixty a minute; past that they are counted, and when the minute ends
 * one record says how many more there were ("2000 more refused requests by alice in the last
 * minute"). Records of what a user did are always written: each one is bounded by the user's
 * rights and the disk it changed.
 */
export class RefusedRecords {
  private windowEnd = 0;
  private readonly written = new Map<number, number>();
  private readonly counted = new Map<number, Counted>();

  /**
   * Whether `record` is written now; if not, it is counted for the summary. Answers too the
   * summaries of a window that ended before `now`, to be written first.
   */
  admit(record: AuditRecord, now: number): { write: boolean; summaries: AuditRecord[] } {
    const summaries = now >= this.windowEnd ? this.roll(now) : [];
    if (record.status < 400) return { write: true, summaries };
    const mine = this.written.get(record.userId) ?? 0;
    if (mine < REFUSED_RECORDS_PER_USER) {
      this.written.set(record.userId, mine + 1);
      return { write: true, summaries };
    }
    const entry = this.counted.get(record.userId) ?? { sample: record, count: 0 };
    entry.count++;
    this.counted.set(record.userId, entry);
    return { write: false, summaries };
  }

  /** When the current window ends, if anything waits to be summed up then. */
  pendingUntil(): number | undefined {
    return this.counted.size > 0 ? this.windowEnd : undefined;
  }

  /** Ends the window: the summaries of what it counted. */
  roll(now: number): AuditRecord[] {
    const summaries = [...this.counted.values()].map(({ sample, count }): AuditRecord => ({
      ...sample,
      time: now,
      path: '',
      destination: '',
      detail: `${count} more refused requests by ${sample.username} in the last minute`,
    }));
    this.windowEnd = now + WINDOW_MS;
    this.written.clear();
    this.counted.clear();
    return summaries;
  }
}
