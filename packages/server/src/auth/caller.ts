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

/**
 * `items` for as long as `caller` may still have them: asked again before each one, so that a
 * stream outliving its request (an archive's members, a search's hits) stops as a new request
 * would be refused, with that refusal as its error.
 */
export async function* whileAllowed<T>(items: AsyncIterable<T>, caller: Caller): AsyncGenerator<T> {
  for await (const item of items) {
    await caller.now();
    yield item;
  }
}
