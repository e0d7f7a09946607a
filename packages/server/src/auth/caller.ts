import type { AppContext } from '../context.js';
import { forbidden, unauthorized } from '../errors.js';
import { accessTerms, type Confinement } from '../files/access/access.js';
import type { StoredUser } from '../store/users.js';
import { sessionKeyOf } from '../store/sessions.js';
import { currentApiTokenGrant, type ApiTokenGrant } from './api-tokens.js';

/**
 * Who made a request, kept so that it can be asked again. Work that outlives its request (a copy
 * or move job, an archive download, a search stream) does not keep the user the guard found:
 * between two items it asks the caller again, through the checks the guard makes for every
 * request, and stops as a new request would be refused. A session ended (logout, a password,
 * permission or scope change), an API token revoked or expired, a deleted user, a permission
 * withdrawn: the next check throws the refusal.
 */
export interface Caller {
  readonly userId: number;
  /** The folder an API token limited to one confines the caller to (it never changes). */
  readonly confinedTo: string | undefined;
  /**
   * The user as the caller may act now (an API token's cut permissions and folder included).
   * Throws 401 when the session or token behind it ended or the user is gone, 403 when what the
   * work needs is no longer allowed, or when the user's scope or rules changed since it started:
   * its paths were given in that scope and its checks made with those rules.
   */
  now(): Promise<StoredUser & Confinement>;
}

/**
 * What a session is asked again through: the auth service's `currentSession` (auth/service.ts),
 * named by its shape so that this module, which the job registry names, does not lead back to
 * the service and everything it imports.
 */
export interface SessionCheck {
  currentSession(sessionKey: string, userId: number): Promise<{ user: StoredUser; sessionKey: string }>;
}

/** How a request proved who it is: what the caller is derived from again. */
export type Credential =
  | { kind: 'session'; sessionId: string; userId: number }
  | { kind: 'apiToken'; tokenId: string; userId: number; confinedTo: string | undefined }
  /**
   * Credentials checked afresh on every request, with no session behind them (WebDAV's Basic
   * password, a proxy's header, no authentication): the account as it was then. Any change to it
   * since (a password, permissions, scope, a removal) ends what the request started.
   */
  | { kind: 'account'; userId: number; updatedAt: number };

/**
 * A caller for `credential`. `permit` is the guard's own permission check of the request
 * (`permit` in http/guards.ts), run again on the user as they are now.
 */
export function callerFrom(
  ctx: AppContext & { auth: SessionCheck },
  credential: Credential,
  permit: (user: StoredUser, grant: ApiTokenGrant | undefined) => void,
): Caller {
  // Held by its key (store/sessions.ts), as renewals are recorded.
  let sessionKey = credential.kind === 'session' ? sessionKeyOf(credential.sessionId) : '';
  let terms: string | undefined;
  const derive = async (): Promise<{ user: StoredUser & Confinement; grant?: ApiTokenGrant }> => {
    if (credential.kind === 'apiToken') {
      const grant = await currentApiTokenGrant(ctx, credential.tokenId);
      return { user: grant.user, grant };
    }
    if (credential.kind === 'account') {
      const user = await ctx.store.users.get(credential.userId);
      if (!user) throw unauthorized('the user no longer exists');
      if (user.updatedAt !== credential.updatedAt) {
        throw unauthorized('the account changed since the request began: sign in again');
      }
      return { user };
    }
    const current = await ctx.auth.currentSession(sessionKey, credential.userId);
    // A renewal carries the work over: it follows the session the client now holds.
    sessionKey = current.sessionKey;
    return { user: current.user };
  };
  return {
    userId: credential.userId,
    confinedTo: credential.kind === 'apiToken' ? credential.confinedTo : undefined,
    async now() {
      const { user, grant } = await derive();
      permit(user, grant);
      const now = accessTerms(ctx, user);
      terms ??= now;
      if (now !== terms) throw forbidden('the user’s scope or rules changed since it started');
      return user;
    },
  };
}

export interface AllowedOptions {
  /**
   * How many items may be found ahead while the caller is asked (0, the default: each item is
   * asked for once it is found, and nothing is looked for meanwhile). Ahead, finding goes on while
   * a check is on its way, and one check lets out everything found before it began: every item
   * still goes out only after a check that began once it was found, but a search on PostgreSQL no
   * longer waits a round trip per hit. Only for items that hold nothing open (a hit, not a file).
   */
  ahead?: number;
  /** Aborted when the stream stops early (a refusal, its reader gone), for the source to stop its work. */
  stop?: AbortController;
}

/**
 * `items` for as long as `caller` may still have them: asked again before each one goes out
 * (before each batch found meanwhile, with `ahead`), so that a stream outliving its request (an
 * archive's members, a search's hits) stops as a new request would be refused, with that refusal
 * as its error.
 */
export async function* whileAllowed<T>(
  items: AsyncIterable<T>,
  caller: Caller,
  opts: AllowedOptions = {},
): AsyncGenerator<T> {
  if (!opts.ahead) {
    for await (const item of items) {
      await caller.now();
      yield item;
    }
    return;
  }
  const found = new FoundAhead(items, opts.ahead);
  try {
    for (;;) {
      const batch = await found.take();
      if (batch.length === 0) break;
      await caller.now();
      yield* batch;
    }
  } finally {
    opts.stop?.abort();
    await found.close();
  }
}

/** Items pulled from a source ahead of their reader, at most `bound` waiting at a time. */
class FoundAhead<T> {
  private readonly waiting: T[] = [];
  private failure: { err: unknown } | undefined;
  private ended = false;
  private stopped = false;
  private wakeReader: (() => void) | undefined;
  private wakePuller: (() => void) | undefined;
  private readonly pulling: Promise<void>;

  constructor(
    items: AsyncIterable<T>,
    private readonly bound: number,
  ) {
    this.pulling = this.pull(items[Symbol.asyncIterator]());
  }

  private async pull(source: AsyncIterator<T>): Promise<void> {
    try {
      while (!this.stopped) {
        if (this.waiting.length >= this.bound) {
          await new Promise<void>((resolve) => (this.wakePuller = resolve));
          continue;
        }
        const next = await source.next();
        if (next.done) return;
        this.waiting.push(next.value);
        this.wake('reader');
      }
      await source.return?.();
    } catch (err) {
      this.failure = { err };
    } finally {
      this.ended = true;
      this.wake('reader');
    }
  }

  private wake(who: 'reader' | 'puller'): void {
    const resolve = who === 'reader' ? this.wakeReader : this.wakePuller;
    if (who === 'reader') this.wakeReader = undefined;
    else this.wakePuller = undefined;
    resolve?.();
  }

  /** Everything found so far, waiting for at least one item; none once the source ended. */
  async take(): Promise<T[]> {
    while (this.waiting.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
    if (this.waiting.length === 0 && this.failure) throw this.failure.err;
    const batch = this.waiting.splice(0);
    this.wake('puller');
    return batch;
  }

  /** Stops pulling and waits for the source to be let go. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake('puller');
    await this.pulling;
  }
}
