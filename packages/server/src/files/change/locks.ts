import { may } from '../../auth/policy.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import type { DavLock } from '../../store/dav.js';
import type { StoredUser } from '../../store/users.js';
import type { AccessView } from '../access/access-view.js';
import { isInside } from '../access/resolver.js';

/**
 * WebDAV's write locks, enforced on every write whatever way it comes (WebDAV, the web API,
 * resumable uploads, restores, jobs). The write primitives (files/ops.ts, files/trash.ts,
 * uploads/resumable.ts) ask `assertWritable` before they change anything, as they ask the quota,
 * so no route can forget it.
 *
 * A lock covers only what its holder may write now: it is checked against the holder's current
 * file access (scope, rules, hidden dotfiles) and permissions each time it is enforced against
 * someone else. A place below a depth-infinity lock that the holder cannot reach is not covered;
 * a holder who can no longer reach or write the locked place itself (or no longer exists) has
 * lost the lock, which is then dropped.
 */

/** What a write touches besides its own place. */
export interface LockedScope {
  /** It replaces or removes everything below the place too (delete, move, replace). */
  deep?: boolean;
  /**
   * It adds or removes the place as a member of its folder (the folder's own lock counts). When
   * the write makes missing folders on the way, the first of them is the new member, of the
   * nearest folder that exists.
   */
  member?: boolean;
}

/**
 * Who writes. Through WebDAV a lock is honoured only for its holder submitting its token in the
 * `If` header (`tokens`); the web API cannot submit tokens, so there a holder's own locks never
 * stand in their way (`tokens` undefined).
 */
export interface LockWriter {
  userId: number;
  tokens?: ReadonlySet<string>;
}

/** 423 naming who holds what is in the way; `places` are the locks' roots below the root. */
export class LockedError extends AppError {
  constructor(
    readonly places: readonly string[],
    message: string,
  ) {
    super('locked', message);
  }
}

const isAncestor = (a: string, b: string) => a !== b && isInside(a, b);
const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

/** The folder that gains a member when `place` is made with `created` folders and file (at least itself). */
function gainingFolder(place: string, created: number): string {
  let folder = place;
  for (let i = 0; i < Math.max(1, created); i++) folder = parentOf(folder);
  return folder;
}
const timeText = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** "locked by alice through WebDAV until 2026-05-01T12:00:00Z". */
export async function lockedMessage(ctx: AppContext, locks: readonly DavLock[]): Promise<string> {
  const who = await Promise.all(
    locks.map(
      async (l) =>
        `${(await ctx.store.users.get(l.userId))?.username ?? 'a deleted user'} through WebDAV until ${timeText(l.expiresAt)}`,
    ),
  );
  return `locked by ${[...new Set(who)].join(' and by ')}`;
}

/** Whether a lock applies to a write at `place` of the given reach (by paths only). */
function touches(l: DavLock, place: string, opts: LockedScope, created: number): boolean {
  return (
    l.path === place ||
    (l.depth === 'infinity' && isAncestor(l.path, place)) ||
    (!!opts.deep && isAncestor(place, l.path)) ||
    (!!opts.member && l.path === gainingFolder(place, created))
  );
}

export class WriteLocks {
  /** Holders' accesses, made once per request that needs them. */
  private readonly accesses = new Map<number, Promise<AccessView>>();

  constructor(
    private readonly ctx: AppContext,
    /** Undefined for the server's own writes (home folders), which no lock holds back. */
    private readonly writer: LockWriter | undefined,
    /** A user's current file access (files/access.ts, passed in to keep the modules apart). */
    private readonly makeAccess: (user: StoredUser) => Promise<AccessView>,
  ) {}

  private readonly accessOf = (user: StoredUser): Promise<AccessView> => {
    let made = this.accesses.get(user.id);
    if (!made) {
      made = this.makeAccess(user);
      this.accesses.set(user.id, made);
    }
    return made;
  };

  /**
   * Refuses (423, `LockedError`) a write to what `r` names when a lock covers it that the
   * writer does not hold (see the module comment). Both the entry and, for a link followed,
   * what it leads to are checked. `missing` names what the write creates (resolver's `Opened`).
   */
  async assertWritable(
    access: AccessView,
    r: { entry: string; real: string; missing?: readonly string[] },
    opts: LockedScope = {},
  ): Promise<void> {
    if (!this.writer) return;
    const places = new Set<string>();
    for (const p of [r.entry, r.real]) {
      const place = access.rootPathOf(p);
      if (place !== undefined) places.add(place);
    }
    const unmet: DavLock[] = [];
    for (const place of places) {
      const related = await this.ctx.store.davLocks.related(access.root.id, place);
      if (related.length === 0) continue;
      const byRoot = new Map<string, DavLock[]>();
      for (const l of related) {
        if (touches(l, place, opts, r.missing?.length ?? 0))
          byRoot.set(l.path, [...(byRoot.get(l.path) ?? []), l]);
      }
      for (const locks of byRoot.values()) {
        if (locks.some((l) => this.mine(l))) continue;
        const holding = await this.holding(locks, place);
        if (holding.length > 0) unmet.push(...holding);
      }
    }
    if (unmet.length > 0) {
      throw new LockedError([...new Set(unmet.map((l) => l.path))], await lockedMessage(this.ctx, unmet));
    }
  }

  /** A lock the writer holds and, through WebDAV, named. */
  private mine(l: DavLock): boolean {
    const w = this.writer!;
    return l.userId === w.userId && (w.tokens === undefined || w.tokens.has(l.token));
  }

  /** Of these locks (one root), those that cover `place` for their holders now. */
  private async holding(locks: readonly DavLock[], place: string): Promise<DavLock[]> {
    const out: DavLock[] = [];
    for (const l of locks) if (await liveFor(this.ctx, l, place, this.accessOf)) out.push(l);
    return out;
  }
}

/**
 * Whether a lock still holds `place` (its own root, or a place below or beside it that a write
 * touches) for its holder: the holder exists (and the API token it was taken with, unexpired),
 * may still write (create or modify), and reaches
 * both the lock's root and, when it lies below it, `place` through their current access. A
 * lock whose holder lost its root is dropped here.
 */
export async function liveFor(
  ctx: AppContext,
  lock: DavLock,
  place: string,
  accessOf: (user: StoredUser) => Promise<AccessView>,
): Promise<boolean> {
  const holder = await ctx.store.users.get(lock.userId);
  // A lock taken with an API token ends with it: revoked (its row gone) or expired.
  const token = lock.apiToken === undefined ? undefined : await ctx.store.apiTokens.get(lock.apiToken);
  const tokenLive =
    lock.apiToken === undefined || (!!token && (token.expiresAt === 0 || token.expiresAt > Date.now()));
  let reaches: ((p: string) => boolean) | undefined;
  if (holder && tokenLive && (may(holder.perm, 'modify') || may(holder.perm, 'create'))) {
    try {
      const access = await accessOf(holder);
      if (access.root.id === lock.rootId) {
        reaches = (p) => {
          const virtual = access.virtualOfRootPath(p);
          return virtual !== undefined && access.check(virtual);
        };
      }
    } catch (err) {
      // A scope that no longer exists reaches nothing; a server in trouble decides nothing.
      const code = (err as NodeJS.ErrnoException).code;
      if (!(err instanceof AppError && err.status < 500) && code !== 'ENOENT' && code !== 'ENOTDIR')
        throw err;
    }
  }
  if (!reaches?.(lock.path)) {
    await ctx.store.davLocks.delete(lock.token);
    ctx.log.info({ token: lock.token, path: lock.path }, 'a WebDAV lock ended: its holder lost the place');
    return false;
  }
  return !isAncestor(lock.path, place) || reaches(place);
}
