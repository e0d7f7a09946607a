import path from 'node:path';
import { inTurn, type Turns } from '../../store/in-turn.js';
import { inBackground } from '../../background.js';
import type { AppContext } from '../../context.js';
import type { ScopeUsage } from '../../store/scope-usage.js';
import { AppError } from '../../errors.js';
import type { AccessView } from '../access/access-view.js';
import { Pinned } from '../access/anchor.js';
import { isInside } from '../access/resolver.js';
import { walkTree, type WalkOptions } from '../access/tree.js';
import { formatBytes, QuotaHold, type Limit } from './quota-hold.js';
import { CLOCK_SLACK_MS, pauseBeforeWalk, WALK_ATTEMPTS } from './measure.js';
import { reservationsFor, type Reservations } from './quota-reservations.js';
import { oncePerStore } from '../../store/once-per-store.js';
import { storedOrLater } from '../../store/until-stored.js';

/**
 * Quotas. A user's quota is a limit on the bytes their scope holds, trash included.
 * The quota belongs to the folder: users sharing a scope share it (the smallest non-zero quota
 * of theirs applies), and every write landing below a folder with a quota counts against it,
 * whoever writes (an administrator writing into a full home folder is refused too).
 *
 * What a scope holds is counted once by a walk (the first time it is needed, then again every
 * `RECOUNT_EVERY_MS` or on demand, to catch changes made outside the server) and kept in the
 * store (`scope_usage`); every write the server makes then adjusts that number instead of
 * walking. The trash is not walked: its records say what each deleted item holds, and an item
 * counts in every scope holding the place it was deleted from (where a restore puts it back).
 * WebDAV's dead properties count the same way, from their records, in every scope holding the
 * resource they are kept on (a PROPPATCH holds its growth here before it writes them).
 *
 * Writes reserve what they may add before their first byte (a declared length, the size of a
 * copy) and the check counts what other writes in progress reserved, so parallel uploads cannot
 * pass the check together; the reservation becomes usage when the write completes and is let go
 * when it fails. This module is the one place the check is made: the write primitives of
 * files/ops.ts, the trash and the resumable uploads call it.
 */

/** Recounts every counted scope at least this often: the disk may change behind the server. */
export const RECOUNT_EVERY_MS = 3600_000;

/** Quotas are kept for the users' root (every user's scope lies in `--root` today). */
const USERS_ROOT = 'default';

function quotaExceeded(left: number, limit: number): AppError {
  return new AppError(
    'insufficient_storage',
    `Quota exceeded: ${formatBytes(left)} left of ${formatBytes(limit)}`,
  );
}

/** `/users/bob` for a user's scope as stored (`users/bob`, `./users/bob/`, `/`). */
function scopePlace(scope: string): string {
  return path.posix.normalize('/' + scope.replace(/^\.(\/|$)/, '/')).replace(/(.)\/+$/, '$1');
}

export class QuotaLedger {
  /** Exclusive sections, one at a time across the instances (`exclusive`). */
  private readonly turns: Turns;
  /** Bytes reserved by writes in progress, per quota'd scope. */
  private readonly reserved: Reservations;
  /** Walks in progress, shared by everyone who needs the count meanwhile. */
  private readonly walks = new Map<string, Promise<boolean>>();
  /** Changes made while a scope was being walked: added to the walk's result. */
  private readonly duringWalk = new Map<string, number>();
  /** Counted scopes (the store's rows), read once. */
  private counted: Set<string> | undefined;
  /** Real places of users' scopes, by scope as configured (a scope may be reached through a link). */
  private places = new Map<string, string | undefined>();
  /** Tests only: runs at each entry a recount's walk meets, with its real path, before the walk goes on. */
  walkStep?: (realPath: string) => Promise<void> | void;
  /** Tests only (`BuildOptions.beforeReplace`): runs just before a replacing write's or a move's rename. */
  beforeReplace?: (realPath: string) => Promise<void> | void;
  /** Tests only: runs before a count is stored (a write's, once it is on disk). */
  beforeCount?: () => Promise<void> | void;

  /** The holder of this instance's own writes. */
  private readonly own: string;

  constructor(private readonly ctx: AppContext) {
    this.turns = inTurn(ctx.store.lockLine);
    this.reserved = reservationsFor(ctx);
    this.own = ctx.store.instance.id;
  }

  private async countedScopes(): Promise<Set<string>> {
    this.counted ??= new Set(
      (await this.ctx.store.scopeUsage.all()).filter((u) => u.rootId === USERS_ROOT).map((u) => u.scope),
    );
    return this.counted;
  }

  /** Where a scope as configured really is below the root; undefined when it is outside or gone. */
  private async placeOf(access: AccessView, scope: string): Promise<string | undefined> {
    const lexical = scopePlace(scope);
    if (this.places.has(lexical)) return this.places.get(lexical);
    let place: string | undefined;
    try {
      const folder = await Pinned.folder(path.join(access.scope.rootReal, lexical));
      await folder.close();
      place = access.rootPathOf(folder.real);
    } catch {
      place = undefined;
    }
    // A scope not there yet is looked up again next time, a found one is kept until a recount.
    if (place !== undefined) this.places.set(lexical, place);
    return place;
  }

  /** Quotas by folder: the smallest non-zero quota of the users whose scope it is. */
  private async limits(access: AccessView): Promise<Limit[]> {
    const byScope = new Map<string, number>();
    for (const user of await this.ctx.store.users.list()) {
      if (!(user.quota > 0)) continue;
      const place = await this.placeOf(access, user.scope);
      if (place === undefined) continue;
      const before = byScope.get(place);
      byScope.set(place, before === undefined ? user.quota : Math.min(before, user.quota));
    }
    return [...byScope].map(([scope, bytes]) => ({ scope, bytes }));
  }

  /** The quotas of these folders as they are now (an admin may have changed them). */
  async currentLimits(access: AccessView, of: readonly Limit[]): Promise<Limit[]> {
    const now = await this.limits(access);
    return of.flatMap((l) => now.filter((n) => n.scope === l.scope));
  }

  /** The quota of one folder (0: none). */
  async limitOf(access: AccessView, scope: string): Promise<number> {
    if (access.root.id !== USERS_ROOT) return 0;
    return (await this.limits(access)).find((l) => l.scope === scope)?.bytes ?? 0;
  }

  /** The place below the root of a user's scope as the access sees it (its real folder). */
  scopeOf(access: AccessView): string | undefined {
    return access.rootPathOf(access.scope.real);
  }

  /**
   * Holds the quotas covering the real path `real` for a write adding `need` bytes (negative: a
   * write making room), measured only when something covers it; refused with 507 when it does not
   * fit. With `from`, the write is a move from there: scopes holding both places gain nothing.
   */
  async reserve(
    access: AccessView,
    real: string,
    need: number | (() => Promise<number>),
    from?: string,
    holder?: string,
  ): Promise<QuotaHold> {
    const hold = await this.holdFor(access, real, from, holder);
    if (!hold.active) return hold;
    const bytes = typeof need === 'number' ? need : await need();
    await hold.need(bytes);
    return hold;
  }

  /**
   * An unchecked hold over what covers `real`: the caller calls `need` when it knows the size.
   * With `holder` (a pending resumable upload's), the hold is that holder's: it starts with what
   * the holder already holds (through another instance, say), and its release forgets it all.
   */
  async holdFor(access: AccessView, real: string, from?: string, holder?: string): Promise<QuotaHold> {
    const idle = () => new QuotaHold(this, [], [], [], { holder: this.own });
    if (access.root.id !== USERS_ROOT) return idle();
    const at = access.rootPathOf(real);
    const was = from === undefined ? undefined : access.rootPathOf(from);
    if (at === undefined) return idle();
    const covers = (scope: string, p: string | undefined) => p !== undefined && isInside(scope, p);
    const newHere = (scope: string) => covers(scope, at) && !covers(scope, was);
    const limits = (await this.limits(access)).filter((l) => newHere(l.scope));
    // Every scope with a quota is counted from the first write that needs it.
    for (const l of limits) await this.ensureCounted(access, l.scope);
    const counted = [...(await this.countedScopes())];
    const gaining = counted.filter(newHere);
    const losing = was === undefined ? [] : counted.filter((s) => covers(s, was) && !covers(s, at));
    if (holder === undefined) return new QuotaHold(this, limits, gaining, losing, { holder: this.own });
    let held = 0;
    for (const l of limits) held = Math.max(held, await this.reserved.heldBy(holder, l.scope));
    return new QuotaHold(this, limits, gaining, losing, { holder, held, forgetOnRelease: true });
  }

  /** Whether a quota counts what lies at `real`: its bytes leaving or coming change a count. */
  async counts(access: AccessView, real: string): Promise<boolean> {
    const at = access.root.id === USERS_ROOT ? access.rootPathOf(real) : undefined;
    if (at === undefined) return false;
    const scopes = [...(await this.countedScopes()), ...(await this.limits(access)).map((l) => l.scope)];
    return scopes.some((scope) => isInside(scope, at));
  }

  /**
   * Runs `work` when no other exclusive section runs. What the ledger reads from the store and
   * what it holds in memory change together only inside one: a check and the hold it grants, a
   * write's count and the release of its hold, a walk's result and the changes made during it.
   * (The store answers asynchronously; without this, two writes could each check before either
   * held.) On a database several instances share, one section runs at a time across them.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.turns('quota', work);
  }

  /** Refuses `bytes` (with `mine` already held by the same write) beyond what any limit leaves. */
  async check(limits: readonly Limit[], bytes: number, mine: number): Promise<void> {
    for (const l of limits) {
      const left = l.bytes - (await this.usedNow(l.scope)) - ((await this.reserved.total(l.scope)) - mine);
      if (bytes > left) throw quotaExceeded(Math.max(0, left), l.bytes);
    }
  }

  /** What the tightest of `limits` leaves (with `mine` already held by the asker): may be negative. */
  async room(limits: readonly Limit[], mine: number): Promise<number> {
    let room = Infinity;
    for (const l of limits) {
      room = Math.min(
        room,
        l.bytes - (await this.usedNow(l.scope)) - ((await this.reserved.total(l.scope)) - mine),
      );
    }
    return room;
  }

  async hold(limits: readonly Limit[], bytes: number, holder: string): Promise<void> {
    if (bytes > 0)
      await this.reserved.add(
        holder,
        limits.map((l) => l.scope),
        bytes,
      );
  }

  /** Gives back what a hold held; never rejects (Reservations.letGo). */
  letGo(limits: readonly Limit[], bytes: number, holder: string, forget: boolean): Promise<void> {
    if (forget) return this.reserved.forget(holder);
    if (bytes <= 0) return Promise.resolve();
    return this.reserved.letGo(
      holder,
      limits.map((l) => l.scope),
      bytes,
    );
  }

  /** Forgets all a holder holds (a pending upload ended where nothing here held it). */
  forget(holder: string): void {
    inBackground(this.reserved.forget(holder), () => undefined);
  }

  /** Adds `delta` bytes to counted scopes (a completed write, delete, move). */
  async record(scopes: readonly string[], delta: number): Promise<void> {
    if (delta === 0 || scopes.length === 0) return;
    await this.ctx.store.scopeUsage.add(USERS_ROOT, scopes, delta);
    for (const s of scopes) {
      const pending = this.duringWalk.get(s);
      if (pending !== undefined) this.duringWalk.set(s, pending + delta);
    }
  }

  storedOrLater(step: () => Promise<void>): Promise<void> {
    return storedOrLater(
      this.ctx.store,
      async () => {
        await this.beforeCount?.();
        await step();
      },
      (err) => this.ctx.log.error({ err }, 'a change of a quota’s count could not be stored'),
    );
  }

  /** Bytes of the WebDAV properties kept on what lies at `real` and below it. */
  async propsWithin(access: AccessView, real: string): Promise<number> {
    const at = access.root.id === USERS_ROOT ? access.rootPathOf(real) : undefined;
    return at === undefined ? 0 : await this.ctx.store.davProps.bytesWithin(USERS_ROOT, at);
  }

  /** A change of `delta` bytes at the real path `real` that nobody had to check (a delete). */
  async changed(access: AccessView, real: string, delta: number | (() => Promise<number>)): Promise<void> {
    const hold = await this.holdFor(access, real);
    if (hold.active) await hold.commit(typeof delta === 'number' ? delta : await delta());
  }

  /**
   * What a counted scope holds now, its trash and the WebDAV properties kept on what lies in it
   * included (both counted from their records; 0 for a scope never counted).
   */
  private async usedNow(scope: string): Promise<number> {
    const tree = (await this.ctx.store.scopeUsage.get(USERS_ROOT, scope))?.bytes ?? 0;
    return (
      tree +
      (await this.ctx.store.trash.bytesBelow(USERS_ROOT, scope)) +
      (await this.ctx.store.davProps.bytesBelow(USERS_ROOT, scope))
    );
  }

  /** What a scope holds, trash included: counted by a walk first when it never was. */
  async usage(access: AccessView, scope: string): Promise<number> {
    await this.ensureCounted(access, scope);
    return await this.usedNow(scope);
  }

  private async ensureCounted(access: AccessView, scope: string): Promise<void> {
    if ((await this.countedScopes()).has(scope)) return;
    await this.recount(access, scope);
  }

  /**
   * Walks a scope and records what it holds. Changes the server makes meanwhile are added to
   * the result; a walk asked for while one runs waits for that one. A walk is not a snapshot: an
   * entry moved (by anyone) from where it had not been to where it had been is missed. So a walk
   * that saw the tree change under it (`WalkOptions.changes`) is made again, and after
   * `WALK_ATTEMPTS` such walks the largest count is kept, or the stored one when it is larger:
   * a count is lowered only by a walk that saw nothing change. Answers whether the count kept
   * came from such a walk (settled).
   */
  recount(access: AccessView, scope: string): Promise<boolean> {
    const running = this.walks.get(scope);
    if (running) return running;
    const walk = (async () => {
      try {
        let largest = 0;
        for (let attempt = 1; ; attempt++) {
          await pauseBeforeWalk(attempt);
          this.duringWalk.set(scope, 0);
          const before = await this.ctx.store.scopeUsage.get(USERS_ROOT, scope);
          let changed = false;
          const changes = { since: Date.now() - CLOCK_SLACK_MS, seen: () => (changed = true) };
          const bytes = await walkBytes(access, scope, changes, this.walkStep);
          const kept = await this.exclusive(async () => {
            const meanwhile = await this.changedMeanwhile(scope, before);
            // Another instance counted it meanwhile: its count is as fresh, and stays.
            if (meanwhile === undefined) return { settled: true };
            const counted = Math.max(0, bytes + meanwhile);
            largest = Math.max(largest, counted);
            if (changed && attempt < WALK_ATTEMPTS) return undefined;
            // Walks that all saw changes (or folders they could not read) may all have missed
            // something: they raise the count, never lower it.
            const stored = changed
              ? (await this.ctx.store.scopeUsage.get(USERS_ROOT, scope))?.bytes
              : undefined;
            await this.ctx.store.scopeUsage.set({
              rootId: USERS_ROOT,
              scope,
              bytes: changed ? Math.max(largest, stored ?? 0) : counted,
              countedAt: Date.now(),
            });
            (await this.countedScopes()).add(scope);
            return { settled: !changed };
          });
          if (kept) return kept.settled;
        }
      } finally {
        this.duringWalk.delete(scope);
        this.walks.delete(scope);
      }
    })();
    this.walks.set(scope, walk);
    return walk;
  }

  /**
   * What the count of a scope changed by while it was walked, from `before` (its row as the walk
   * began): every instance's writes go into the row, so the row's change holds them all, where
   * this instance's own record (`duringWalk`) would miss those made through the others. A scope
   * not counted before has only this instance's record; undefined when another instance counted
   * it again meanwhile.
   */
  private async changedMeanwhile(scope: string, before: ScopeUsage | undefined): Promise<number | undefined> {
    const now = await this.ctx.store.scopeUsage.get(USERS_ROOT, scope);
    if (before === undefined || now === undefined) return this.duringWalk.get(scope) ?? 0;
    if (now.countedAt !== before.countedAt) return undefined;
    return now.bytes - before.bytes;
  }

  /**
   * The quota of a user's scope (undefined when none applies) and what the scope holds, counted
   * by a fresh walk first with `recount`.
   */
  async ofScope(
    access: AccessView,
    scope: string,
    recount = false,
  ): Promise<{ limit: number; used: number } | undefined> {
    if (access.root.id !== USERS_ROOT) return undefined;
    const place = await this.placeOf(access, scope);
    if (place === undefined) return undefined;
    const limit = await this.limitOf(access, place);
    if (limit <= 0) return undefined;
    if (recount) await this.recount(access, place);
    return { limit, used: await this.usage(access, place) };
  }

  /**
   * What a command about to run in `access`'s scope may write, the server seeing none of it byte
   * by byte. The quotas covering the scope lend it all the room they have left, held until
   * `settle`, so that no second command and no upload counts on the same bytes meanwhile; the
   * quotas of folders inside the scope (another user's home in an administrator's) bound it too,
   * without holding their room. `room` is the least of them (undefined: no quota applies), `over`
   * a covering quota the scope already passed. Counts a walk is correcting are waited for.
   * `settle`, once the command has ended, walks the counted scopes it could have changed again
   * and then lets the room go: its writes are counted before anyone else may use that room (when
   * a walk could not see the whole scope, the room it was lent counts as written);
   * `release` lets it go at once (a command that never started).
   */
  async lendToCommand(access: AccessView): Promise<{
    room?: number;
    over?: { used: number; limit: number };
    settle(): Promise<void>;
    release(): void;
    watch?: (overQuota: () => void) => () => void;
  }> {
    const place = this.scopeOf(access);
    const none = { settle: async () => undefined, release: () => undefined };
    if (place === undefined || access.root.id !== USERS_ROOT) return none;
    await Promise.all(
      [...this.walks]
        .filter(([scope]) => overlaps(scope, place))
        .map(([, walk]) => walk.catch(() => undefined)),
    );
    const hold = await this.holdFor(access, access.scope.real);
    let lent = 0;
    const settle = async () => {
      try {
        // Its writes are counted by the walks after it: walks that could not see the whole scope
        // (changed under them, a folder they cannot read or too deep to walk, a failure) may have
        // missed them, so what it was lent counts as written until a walk sees it all.
        if (!(await this.recountOverlapping(access, place)) && lent > 0) await hold.commit(lent);
      } finally {
        hold.release();
      }
    };
    const release = () => hold.release();
    try {
      const covering = (await this.limits(access)).filter((l) => isInside(l.scope, place));
      for (const l of covering) {
        const used = await this.usedNow(l.scope);
        if (used > l.bytes) {
          hold.release();
          return { ...none, over: { used, limit: l.bytes } };
        }
      }
      const inside = (await this.limits(access)).filter((l) => l.scope !== place && isInside(place, l.scope));
      for (const l of inside) await this.ensureCounted(access, l.scope);
      lent = (await hold.holdAllRoom()) ?? 0;
      const rooms = [
        hold.limited ? lent : undefined,
        inside.length > 0 ? await this.room(inside, 0) : undefined,
      ].filter((r): r is number => r !== undefined);
      if (rooms.length === 0) return { settle, release };
      // A folder inside already past its quota leaves no room, and does not stop the command.
      const limits: Limit[] = [];
      for (const l of [...covering, ...inside]) if ((await this.usedNow(l.scope)) <= l.bytes) limits.push(l);
      return {
        room: Math.max(0, Math.min(...rooms)),
        settle,
        release,
        watch: (overQuota) => this.watch(access, limits, overQuota),
      };
    } catch (err) {
      hold.release();
      throw err;
    }
  }

  /**
   * Walks the scopes of `limits` again and again while a command runs (a second after it starts,
   * then waiting at least as long as a walk took, and a second, between two), and calls `overQuota` once one holds more than
   * its quota: a command writing many files, each below the room it was lent (RLIMIT_FSIZE),
   * is stopped at the first walk that finds it past the quota. Answers the function that ends it.
   */
  private watch(access: AccessView, limits: readonly Limit[], overQuota: () => void): () => void {
    let watching = true;
    let wake: (() => void) | undefined;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        timer.unref();
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const walks = async () => {
      // The counts are fresh as the command starts (lendToCommand looked): first a pause.
      let took = 0;
      for (;;) {
        await pause(Math.max(1000, took));
        if (!watching) return;
        const started = Date.now();
        try {
          for (const l of limits) await this.recount(access, l.scope);
        } catch (err) {
          this.ctx.log.warn({ err }, 'a scope could not be recounted while a command ran');
        }
        took = Date.now() - started;
        if (!watching) return;
        let over = false;
        for (const l of limits) if ((await this.usedNow(l.scope)) > l.bytes) over = true;
        if (over) {
          watching = false;
          overQuota();
          return;
        }
      }
    };
    inBackground(walks(), (err) => this.ctx.log.warn({ err }, 'the quota watch of a command stopped'));
    return () => {
      watching = false;
      wake?.();
    };
  }

  /**
   * A change the server cannot follow byte by byte (a command run in a scope): the counted
   * scopes overlapping it are walked again.
   */
  private async recountOverlapping(access: AccessView, place: string): Promise<boolean> {
    let settled = true;
    for (const scope of await this.countedScopes()) {
      if (!overlaps(scope, place)) continue;
      const done = await this.recount(access, scope).catch((err: unknown) => {
        this.ctx.log.warn({ err, scope }, 'a scope could not be recounted for its quota');
        return false;
      });
      settled &&= done;
    }
    return settled;
  }

  /** Recounts every counted scope (drift from changes made outside the server). */
  async recountAll(access: AccessView): Promise<void> {
    if (access.root.id !== USERS_ROOT) return;
    // Scopes may have been moved or relinked since they were looked up.
    this.places = new Map();
    for (const scope of [...(await this.countedScopes())]) {
      try {
        await this.recount(access, scope);
      } catch (err) {
        // A scope folder that went away is counted again once it is needed. Any other failure
        // (a tree too deep to walk, no descriptors left) keeps the count it had: forgotten, every
        // write below it would walk again, and fail, until someone repairs the tree.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          await this.ctx.store.scopeUsage.delete(USERS_ROOT, scope);
          (await this.countedScopes()).delete(scope);
        }
        this.ctx.log.warn({ err, scope }, 'a scope could not be recounted for its quota');
      }
    }
  }
}

/** One place holds the other. */
function overlaps(a: string, b: string): boolean {
  return isInside(a, b) || isInside(b, a);
}

/**
 * Bytes of the regular files below a place of the root (links and folders count nothing, links
 * are not followed), the server's private paths (database, trash, staging) left out.
 */
async function walkBytes(
  access: AccessView,
  scope: string,
  changes: WalkOptions['changes'],
  step?: (real: string) => Promise<void> | void,
): Promise<number> {
  const folder = await Pinned.folder(path.join(access.scope.rootReal, scope));
  try {
    let total = 0;
    const include = (e: { real: string }) => !access.isPrivate(e.real);
    for await (const e of walkTree(access, folder, '/', { follow: false, include, staging: true, changes })) {
      if (e.stat.isFile()) total += e.stat.size;
      await step?.(e.real);
    }
    return total;
  } finally {
    await folder.close();
  }
}

const ledgers = oncePerStore<QuotaLedger>();

/** The ledger of a server (one per store: reservations must be seen by every request). */
export function quotaLedgerOf(ctx: AppContext): QuotaLedger {
  return ledgers(ctx.store, () => new QuotaLedger(ctx));
}
