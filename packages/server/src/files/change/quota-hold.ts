import { inBackground } from '../../background.js';
import type { AccessView } from '../access/access-view.js';

/**
 * What one write holds of its quotas (QuotaHold), and the ledger's side of it as the hold sees
 * it: files/change/quota.ts is the ledger.
 */

/** A quota on a folder: its place below the root and the bytes it may hold. */
export interface Limit {
  scope: string;
  bytes: number;
}

/** `1.2 MB`: decimal units, as disks are sold, one decimal at most. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = unit === 0 ? String(Math.floor(value)) : String(Math.round(value * 10) / 10);
  return `${shown} ${units[unit]}`;
}

/** What a hold asks of the ledger (QuotaLedger). */
export interface HoldLedger {
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  check(limits: readonly Limit[], bytes: number, mine: number): Promise<void>;
  room(limits: readonly Limit[], mine: number): Promise<number>;
  hold(limits: readonly Limit[], bytes: number, holder: string): Promise<void>;
  letGo(limits: readonly Limit[], bytes: number, holder: string, forget: boolean): Promise<void>;
  record(scopes: readonly string[], delta: number): Promise<void>;
  /** Runs a count's step now, or once the database is back (what it counts happened on disk). */
  storedOrLater(step: () => Promise<void>): Promise<void>;
  currentLimits(access: AccessView, of: readonly Limit[]): Promise<Limit[]>;
}

/**
 * Bytes held back from the quotas that cover one write, from its start until it completes
 * (`commit`) or fails (`release`). A write with no quota and no counted scope above it gets an
 * idle hold: nothing to check, nothing to count.
 */
export class QuotaHold {
  private held: number;
  private checked = false;
  private done = false;
  /** A commit is under way (perhaps stored later): it gives the hold back itself. */
  private committing = false;
  private readonly holder: string;
  private readonly forgetOnRelease: boolean;

  constructor(
    private readonly ledger: HoldLedger,
    /** Quotas covering where the bytes go (and not where they come from, for a move). */
    private readonly limits: readonly Limit[],
    /** Counted scopes gaining what the write adds. */
    private readonly gaining: readonly string[],
    /** Counted scopes losing it (a move out of them). */
    private readonly losing: readonly string[],
    /**
     * Whose reservation it is (the ledger's `holdFor`): what that holder already holds, and
     * whether the release forgets all it holds (a pending upload's, once the upload ends).
     */
    owner: { holder: string; held?: number; forgetOnRelease?: boolean },
  ) {
    this.holder = owner.holder;
    this.held = owner.held ?? 0;
    this.forgetOnRelease = owner.forgetOnRelease ?? false;
  }

  /** Whether anything is checked or counted for this write (else no size needs measuring). */
  get active(): boolean {
    return this.limits.length > 0 || this.gaining.length > 0 || this.losing.length > 0;
  }

  /** Whether a quota covers the write (so its bytes must be metered as they come). */
  get limited(): boolean {
    return this.limits.length > 0;
  }

  /**
   * Makes the write's net addition `bytes`: refused with 507 when that does not fit beside what
   * the scopes hold and other writes reserved. Less than before is a no-op: what a write holds
   * only grows until it ends.
   */
  async need(bytes: number): Promise<void> {
    if (this.done) return;
    // The first call checks even a write adding nothing: none goes into a scope over its quota.
    if (this.checked && bytes <= this.held) return;
    await this.ledger.exclusive(() => this.needNow(bytes));
  }

  /** `need`, inside the ledger's exclusive section: what is read is what is checked and held. */
  private async needNow(bytes: number): Promise<void> {
    if (this.done) return;
    const more = bytes - this.held;
    if (this.checked && more <= 0) return;
    await this.ledger.check(this.limits, bytes, this.held);
    this.checked = true;
    if (more > 0) {
      await this.ledger.hold(this.limits, more, this.holder);
      this.held += more;
    }
  }

  /**
   * Checks again what the write holds (a resumable upload, at each of its requests): a quota
   * lowered meanwhile, or a scope grown behind the server's back, refuses the rest.
   */
  async recheck(access: AccessView): Promise<void> {
    if (this.done || this.limits.length === 0) return;
    const now = await this.ledger.currentLimits(access, this.limits);
    await this.ledger.exclusive(() => this.ledger.check(now, this.held, this.held));
  }

  /**
   * Holds all the room the quotas covering the write have left (a command, whose writes the
   * server cannot see byte by byte) and answers it; undefined when no quota covers it.
   */
  async holdAllRoom(): Promise<number | undefined> {
    if (this.done || this.limits.length === 0) return undefined;
    return this.ledger.exclusive(async () => {
      const room = Math.max(0, await this.ledger.room(this.limits, this.held));
      await this.needNow(this.held + room);
      return room;
    });
  }

  /** The write is done: `delta` bytes are now on the disk (or gone, negative), the hold goes. */
  async commit(delta: number): Promise<void> {
    if (this.done) return;
    // The bytes are counted and the hold let go in one step, so that no check in between sees
    // them twice or not at all: the give-back is waited for inside the section (shared
    // reservations are rows in the database).
    // What it counts is on disk already: a count the database cannot take now (PostgreSQL away)
    // is stored once it is back, never lost, and the hold is given back with it, in the same step,
    // never before by a release (between the two, another write would find the room free).
    this.committing = true;
    try {
      await this.ledger.storedOrLater(() =>
        this.ledger.exclusive(async () => {
          await this.ledger.record(this.gaining, delta);
          await this.ledger.record(this.losing, -delta);
          await this.giveBack();
        }),
      );
    } catch (err) {
      this.committing = false;
      throw err;
    }
  }

  /**
   * The write failed or was abandoned: what it held is free again. Called from `finally` blocks,
   * so it does not wait; until the give-back is written, others see the bytes still held (the
   * safe side).
   */
  release(): void {
    if (this.committing) return;
    inBackground(this.giveBack(), () => undefined);
  }

  private giveBack(): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    const held = this.held;
    this.held = 0;
    return this.ledger.letGo(this.limits, held, this.holder, this.forgetOnRelease);
  }
}
