import { AppError } from '../errors.js';
import { addressKey } from './ip.js';

const SWEEP_AT_LEAST = 10_000;

/**
 * A fixed-window attempt counter per key. In memory: limits reset on restart, which is
 * acceptable for brute-force throttling on a single process.
 */
export class AttemptLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  /** The size past which ended windows are swept: doubled past what a sweep leaves, so a map of
   * live windows is not walked on every attempt. */
  private sweepAt = SWEEP_AT_LEAST;

  constructor(private readonly windowMs: number) {}

  /** Attempts counted for `key` in its current window. */
  count(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    return w && w.resetAt > now ? w.count : 0;
  }

  /** Seconds until `key` is under `limit` again, or 0 when it is under it now. */
  retryAfter(key: string, limit: number, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now || w.count < limit) return 0;
    return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
  }

  /** Counts one attempt. */
  take(key: string, now = Date.now()): void {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    if (this.windows.size > this.sweepAt) {
      this.sweep(now);
      this.sweepAt = Math.max(SWEEP_AT_LEAST, this.windows.size * 2);
    }
  }

  /** Uncounts `n` attempts (never below zero). */
  give(key: string, n: number, now = Date.now()): void {
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) return;
    w.count = Math.max(0, w.count - n);
  }

  /** Forgets `key`; answers how many attempts it had. */
  clear(key: string, now = Date.now()): number {
    const n = this.count(key, now);
    this.windows.delete(key);
    return n;
  }

  /** Drops the windows that have ended. */
  protected sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

/** A guess counted before it is checked; tell it when the guess was right. */
export interface Reservation {
  succeeded(now?: number): void;
}

/** How long a subject's failures from all addresses are remembered, in login windows. */
const SUBJECT_MEMORY_WINDOWS = 4;

/**
 * Throttles guesses of a secret (a user's password, a share link's password) so that nobody can
 * guess much and nobody can lock anyone else out:
 *
 * - each client address may make `limit` wrong guesses per window, over all subjects;
 * - each (address, subject) pair may make `limit` wrong guesses per window; a right guess
 *   forgets the pair's failures (and takes them off the address's count);
 * - a subject with `limit` failures from all addresses together (remembered four windows) is
 *   under attack: from then on each address gets only a quarter of `limit` for it. An address
 *   that has not failed still gets its tries, so wrong guesses from one place never keep out the
 *   right one from another.
 *
 * Every guess is counted before the secret is checked, so parallel guesses cannot outrun the
 * count: at most `limit` checks run per address and window, however many arrive at once.
 */
export class GuessThrottle {
  private readonly byAddress: AttemptLimiter;
  private readonly byPair: AttemptLimiter;
  private readonly bySubject: AttemptLimiter;
  private readonly underAttack: number;

  constructor(
    private readonly limit: number,
    windowMs: number,
    private readonly message: string,
  ) {
    this.byAddress = new AttemptLimiter(windowMs);
    this.byPair = new AttemptLimiter(windowMs);
    this.bySubject = new AttemptLimiter(windowMs * SUBJECT_MEMORY_WINDOWS);
    this.underAttack = Math.max(1, Math.ceil(limit / 4));
  }

  /**
   * Counts a guess from `address` at `subject`, or throws 429 with Retry-After when it may not
   * guess now (saying `message`, by default the throttle's).
   */
  reserve(address: string, subject: string, now = Date.now(), message = this.message): Reservation {
    const addr = addressKey(address);
    const pair = `${addr}\n${subject}`;
    const pairLimit = this.bySubject.count(subject, now) >= this.limit ? this.underAttack : this.limit;
    const wait = Math.max(
      this.byAddress.retryAfter(addr, this.limit, now),
      this.byPair.retryAfter(pair, pairLimit, now),
    );
    if (wait > 0) throw new AppError('too_many_requests', message, { 'Retry-After': String(wait) });
    this.byAddress.take(addr, now);
    this.byPair.take(pair, now);
    this.bySubject.take(subject, now);
    return {
      succeeded: (at = Date.now()) => {
        const n = this.byPair.clear(pair, at);
        this.byAddress.give(addr, n, at);
        this.bySubject.give(subject, n, at);
      },
    };
  }
}
