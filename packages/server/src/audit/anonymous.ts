import type { AuditAction } from '@filebrowser/contract';
import { addressKey } from '../auth/ip.js';
import type { AuditRecord } from '../store/audit.js';

/** Records of requests nobody signed in for, written one by one per address and window. */
export const ANONYMOUS_RECORDS_PER_ADDRESS = 10;
/** The same over all addresses: past it, every address's are counted, not written. */
const ANONYMOUS_RECORDS_PER_WINDOW = 100;
/** Addresses whose counted records get a summary of their own per window; the rest share one. */
const SUMMARIES_PER_WINDOW = 50;
/** Distinct addresses counted for the summary of all the others. */
const MAX_OTHER_ADDRESSES = 10_000;
/** The window: a minute. */
export const ANONYMOUS_WINDOW_MS = 60_000;

/** What a summary says the records it stands for were. */
const WHAT: Partial<Record<AuditAction, string>> = {
  'auth.login': 'failed sign-ins',
  'auth.signup': 'sign-ups',
  'share.access': 'share link visits',
  'share.download': 'share link downloads',
};

interface Counted {
  address: string;
  action: AuditAction;
  count: number;
  status: number;
}

/**
 * Who is not signed in can send requests as fast as the network carries them, and each may be
 * worth a record (a failed sign-in, a visit of a share link). So that they cannot fill the
 * database, records without a user are written one by one only up to a few per address (an IPv6
 * /64 counts as one) and per minute, and a hundred per minute in all; past that they are counted,
 * and when the minute ends one record per address and action says how many there were ("37 more
 * failed sign-ins from 203.0.113.9 in the last minute"), for fifty addresses at most and one
 * record for all the others. Whatever arrives, a minute adds at most 151 records.
 */
export class AnonymousRecords {
  private windowEnd = 0;
  private written = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly counted = new Map<string, Counted>();
  /** What was counted of the addresses past those told apart. */
  private rest = emptyRest();

  /**
   * Whether `record` is written now; if not, it is counted for the summary. Answers too the
   * summaries of a window that ended before `now`, to be written first.
   */
  admit(record: AuditRecord, now: number): { write: boolean; summaries: AuditRecord[] } {
    const summaries = now >= this.windowEnd ? this.roll(now) : [];
    const address = addressKey(record.address);
    const mine = this.perAddress.get(address) ?? 0;
    if (mine < ANONYMOUS_RECORDS_PER_ADDRESS && this.written < ANONYMOUS_RECORDS_PER_WINDOW) {
      this.perAddress.set(address, mine + 1);
      this.written++;
      return { write: true, summaries };
    }
    const key = `${address}\n${record.action}`;
    const entry = this.counted.get(key) ?? {
      address,
      action: record.action,
      count: 0,
      status: record.status,
    };
    entry.count++;
    entry.status = record.status;
    // Only addresses that already have a summary, or fit in the number kept, are told apart.
    if (this.counted.has(key) || this.counted.size < SUMMARIES_PER_WINDOW) this.counted.set(key, entry);
    else this.others(entry);
    return { write: false, summaries };
  }

  /** When the current window ends, if anything waits to be summed up then. */
  pendingUntil(): number | undefined {
    return this.counted.size > 0 || this.rest.count > 0 ? this.windowEnd : undefined;
  }

  /** Ends the window: the summaries of what it counted. */
  roll(now: number): AuditRecord[] {
    const summaries: AuditRecord[] = [...this.counted.values()].map((c) => ({
      time: now,
      userId: 0,
      username: '',
      address: c.address,
      action: c.action,
      path: '',
      destination: '',
      status: c.status,
      detail: `${c.count} more ${WHAT[c.action] ?? c.action} from ${c.address} in the last minute`,
    }));
    if (this.rest.count > 0) {
      const n = this.rest.addresses.size;
      const others = n >= MAX_OTHER_ADDRESSES ? `at least ${n}` : String(n);
      summaries.push({
        time: now,
        userId: 0,
        username: '',
        address: '',
        action: this.rest.action,
        path: '',
        destination: '',
        status: this.rest.status,
        detail: `${this.rest.count} more requests nobody signed in for, from ${others} other addresses in the last minute`,
      });
    }
    this.windowEnd = now + ANONYMOUS_WINDOW_MS;
    this.written = 0;
    this.perAddress.clear();
    this.counted.clear();
    this.rest = emptyRest();
    return summaries;
  }

  private others(entry: Counted): void {
    this.rest.count++;
    // Only feeds a count: bounded, the count then says "at least".
    if (this.rest.addresses.size < MAX_OTHER_ADDRESSES) this.rest.addresses.add(entry.address);
    this.rest.action = entry.action;
    this.rest.status = entry.status;
  }
}

function emptyRest(): { count: number; addresses: Set<string>; action: AuditAction; status: number } {
  return { count: 0, addresses: new Set(), action: 'auth.login', status: 0 };
}
