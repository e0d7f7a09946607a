import type { AppContext } from '../../context.js';
import { storedOrLater } from '../../store/until-stored.js';

/**
 * Bytes held back by writes in progress, per holder and quota'd scope: in memory for one process
 * on a SQLite file, in the database when several instances share it (store/reservations.ts). A
 * holder is this instance (its writes) or a pending resumable upload, which any instance may go
 * on with and end.
 */
export interface Reservations {
  /** What every write in progress holds back from `scope`. */
  total(scope: string): Promise<number>;
  heldBy(holder: string, scope: string): Promise<number>;
  add(holder: string, scopes: readonly string[], bytes: number): Promise<void>;
  /**
   * Gives bytes back. Never rejects (a failure is logged: the bytes stay held, the safe side),
   * so a write's release in a `finally` block may leave it to run; a commit waits for it.
   */
  letGo(holder: string, scopes: readonly string[], bytes: number): Promise<void>;
  /** Forgets all a holder holds; never rejects, as `letGo`. */
  forget(holder: string): Promise<void>;
}

class LocalReservations implements Reservations {
  private readonly byHolder = new Map<string, Map<string, number>>();

  total(scope: string): Promise<number> {
    let sum = 0;
    for (const scopes of this.byHolder.values()) sum += scopes.get(scope) ?? 0;
    return Promise.resolve(sum);
  }

  heldBy(holder: string, scope: string): Promise<number> {
    return Promise.resolve(this.byHolder.get(holder)?.get(scope) ?? 0);
  }

  add(holder: string, scopes: readonly string[], bytes: number): Promise<void> {
    return this.letGo(holder, scopes, -bytes);
  }

  letGo(holder: string, scopes: readonly string[], bytes: number): Promise<void> {
    const held = this.byHolder.get(holder) ?? new Map<string, number>();
    for (const scope of scopes) {
      const now = (held.get(scope) ?? 0) - bytes;
      if (now > 0) held.set(scope, now);
      else held.delete(scope);
    }
    if (held.size > 0) this.byHolder.set(holder, held);
    else this.byHolder.delete(holder);
    return Promise.resolve();
  }

  forget(holder: string): Promise<void> {
    this.byHolder.delete(holder);
    return Promise.resolve();
  }
}

class SharedReservations implements Reservations {
  /** Bytes given back, written one after the other (until then the others see more held: safe). */
  private giving: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: AppContext) {}

  total(scope: string): Promise<number> {
    return this.ctx.store.reservations.total(scope);
  }

  heldBy(holder: string, scope: string): Promise<number> {
    return this.ctx.store.reservations.heldBy(holder, scope);
  }

  add(holder: string, scopes: readonly string[], bytes: number): Promise<void> {
    return this.ctx.store.reservations.add(holder, scopes, bytes);
  }

  letGo(holder: string, scopes: readonly string[], bytes: number): Promise<void> {
    return this.later(() => this.ctx.store.reservations.add(holder, scopes, -bytes));
  }

  forget(holder: string): Promise<void> {
    return this.later(() => this.ctx.store.reservations.forget(holder));
  }

  /**
   * Runs `work` after the give-backs before it; answers when it is done (never rejects). One the
   * database was away for is tried again in the background until it is stored: lost, its bytes
   * would stay held until this instance is taken for dead.
   */
  private later(work: () => Promise<void>): Promise<void> {
    const warn = (err: unknown) => this.ctx.log.warn({ err }, 'a quota reservation could not be given back');
    this.giving = this.giving.then(() => storedOrLater(this.ctx.store, work, warn)).catch(warn);
    return this.giving;
  }
}

/** The reservations of a store's quota ledger: shared in the database when instances share it. */
export function reservationsFor(ctx: AppContext): Reservations {
  return ctx.store.instance.shared ? new SharedReservations(ctx) : new LocalReservations();
}
