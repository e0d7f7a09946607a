import { AppError } from '../errors.js';
import type { AttemptsRepo, AttemptWindow } from '../store/attempts.js';
import { addressKey } from './ip.js';

const SWEEP_AT_LEAST = 10_000;

/**
 * Attempts counted per key in fixed windows: what a throttle counts with. In this process
 * (`AttemptLimiter`), or in the database where several instances share it (`SharedAttempts`).
 */
export interface AttemptCounter {
  /** Attempts counted for `key` in its current window. */
  count(key: string, now: number): Promise<number>;
  /** Counts one attempt; answers the key's window as it is then. */
  take(key: string, now: number): Promise<AttemptWindow>;
  /** Uncounts `n` attempts (never below zero). */
  give(key: string, n: number, now: number): Promise<void>;
  /** Forgets `key`; answers how many attempts it had. */
  clear(key: string, now: number): Promise<number>;
}

/**
 * A fixed-window attempt counter per key, in memory: limits reset on restart, which is
 * acceptable for brute-force throttling on a single process.
 */
export class AttemptLimiter implements AttemptCounter {
  private readonly windows = new Map<string, AttemptWindow>();
  /**
   * The size past which ended windows are swept: doubled past what a sweep leaves, so a map of
   * live windows is not walked on every attempt.
   */
  private sweepAt = SWEEP_AT_LEAST;

  constructor(private readonly windowMs: number) {}

  count(key: string, now = Date.now()): Promise<number> {
    const w = this.windows.get(key);
    return Promise.resolve(w && w.resetAt > now ? w.count : 0);
  }

  take(key: string, now = Date.now()): Promise<AttemptWindow> {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    const taken = { ...w };
    if (this.windows.size > this.sweepAt) {
      this.sweep(now);
      this.sweepAt = Math.max(SWEEP_AT_LEAST, this.windows.size * 2);
    }
    return Promise.resolve(taken);
  }

  give(key: string, n: number, now = Date.now()): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.resetAt > now) w.count = Math.max(0, w.count - n);
    return Promise.resolve();
  }

  clear(key: string, now = Date.now()): Promise<number> {
    const w = this.windows.get(key);
    this.windows.delete(key);
    return Promise.resolve(w && w.resetAt > now ? w.count : 0);
  }

  /** Drops the windows that have ended. */
  protected sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

/** How many attempts pass between two sweeps of the ended windows in the database. */
const SHARED_SWEEP_EVERY = 1000;

/** Attempts counted in the database (`kind` names the counter): every instance on it sees them. */
export class SharedAttempts implements AttemptCounter {
  private takes = 0;

  constructor(
    private readonly repo: AttemptsRepo,
    private readonly kind: string,
    private readonly windowMs: number,
  ) {}

  async count(key: string, now = Date.now()): Promise<number> {
    return (await this.repo.get(this.kind, key, now))?.count ?? 0;
  }

  async take(key: string, now = Date.now()): Promise<AttemptWindow> {
    if (++this.takes % SHARED_SWEEP_EVERY === 0) await this.repo.sweep(now);
    return await this.repo.take(this.kind, key, this.windowMs, now);
  }

  async give(key: string, n: number, now = Date.now()): Promise<void> {
    await this.repo.give(this.kind, key, n, now);
  }

  clear(key: string, now = Date.now()): Promise<number> {
    return this.repo.clear(this.kind, key, now);
  }
}

/** A guess counted before it is checked; tell it when the guess was right. */
export interface Reservation {
  succeeded(now?: number): Promise<void>;
}

/** How long a subject's failures from all addresses are remembered, in login windows. */
const SUBJECT_MEMORY_WINDOWS = 4;

/** Makes the counter named `kind` with windows of `windowMs`. */
export type CounterMaker = (kind: string, windowMs: number) => AttemptCounter;

const inMemory: CounterMaker = (_kind, windowMs) => new AttemptLimiter(windowMs);

/**
 * The counters of the throttle `name`: in this process on a SQLite file (one server process
 * holds it), in the database where several instances share it (PostgreSQL), so that N instances
 * do not allow N times the guesses.
 */
export function countersFor(
  store: { instance: { shared: boolean }; attempts: AttemptsRepo },
  name: string,
): CounterMaker {
  return store.instance.shared
    ? (kind, windowMs) => new SharedAttempts(store.attempts, `${name}:${kind}`, windowMs)
    : inMemory;
}

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
 * Every guess is counted before the secret is checked, and refused once the count passes the
 * limit, so parallel guesses cannot outrun it: at most `limit` checks run per address and window,
 * however many arrive at once, through however many instances share the counters.
 */
export class GuessThrottle {
  private readonly byAddress: AttemptCounter;
  private readonly byPair: AttemptCounter;
  private readonly bySubject: AttemptCounter;
  private readonly underAttack: number;
  /**
   * One guess counted after another in this process: counts kept in the database are taken in
   * several statements, and interleaved guesses could each see another's passing count and be
   * refused together, fewer than the limit checked.
   */
  private counting: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly limit: number,
    windowMs: number,
    private readonly message: string,
    counters: CounterMaker = inMemory,
  ) {
    this.byAddress = counters('address', windowMs);
    this.byPair = counters('pair', windowMs);
    this.bySubject = counters('subject', windowMs * SUBJECT_MEMORY_WINDOWS);
    this.underAttack = Math.max(1, Math.ceil(limit / 4));
  }

  /**
   * Counts a guess from `address` at `subject`, or throws 429 with Retry-After when it may not
   * guess now (saying `message`, by default the throttle's).
   */
  async reserve(
    address: string,
    subject: string,
    now = Date.now(),
    message = this.message,
  ): Promise<Reservation> {
    const addr = addressKey(address);
    const pair = `${addr}\n${subject}`;
    const turn = this.counting.then(() => this.countGuess(addr, pair, subject, now, message));
    this.counting = turn.catch(() => undefined);
    await turn;
    return {
      succeeded: async (at = Date.now()) => {
        const n = await this.byPair.clear(pair, at);
        await this.byAddress.give(addr, n, at);
        await this.bySubject.give(subject, n, at);
      },
    };
  }

  /** Counts one guess (address, pair, subject), or throws 429 without counting it. */
  private async countGuess(
    addr: string,
    pair: string,
    subject: string,
    now: number,
    message: string,
  ): Promise<void> {
    // Taken first: a right guess of the pair (through another instance) gives back what the pair
    // counted from all addresses and subjects' counts with it, so a guess is counted against its
    // subject before its pair can be given back (taken after, its subject count was never given).
    const bySubject = await this.bySubject.take(subject, now);
    const pairLimit = bySubject.count - 1 >= this.limit ? this.underAttack : this.limit;
    const byAddress = await this.byAddress.take(addr, now);
    const byPair = await this.byPair.take(pair, now);
    if (byAddress.count > this.limit || byPair.count > pairLimit) {
      // Refused guesses are not counted: they checked nothing.
      await this.byAddress.give(addr, 1, now);
      await this.byPair.give(pair, 1, now);
      await this.bySubject.give(subject, 1, now);
      const until = Math.max(
        byAddress.count > this.limit ? byAddress.resetAt : now,
        byPair.count > pairLimit ? byPair.resetAt : now,
      );
      const wait = Math.max(1, Math.ceil((until - now) / 1000));
      throw new AppError('too_many_requests', message, { 'Retry-After': String(wait) });
    }
  }
}
