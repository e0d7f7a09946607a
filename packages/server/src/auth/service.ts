import type { TokenClaims } from '@filebrowser/contract';
import type { AppContext } from '../context.js';
import { AppError, badRequest, forbidden, unauthorized } from '../errors.js';
import type { StoredUser } from '../store/users.js';
import { sessionKeyOf } from '../store/sessions.js';
import { createAccount } from './accounts.js';
import { apiTokenSubject, verifyApiTokenSecret, type ApiTokenGrant } from './api-tokens.js';
import { isTrustedAddress } from './ip.js';
import { checkPassword, MAX_PASSWORD_BYTES, randomPassword, spendPasswordCheckTime } from './passwords.js';
import { countersFor, GuessThrottle } from './rate-limit.js';
import { usernameKey } from './usernames.js';
import { signToken, verifyToken } from './tokens.js';

export interface LoginInput {
  username?: string;
  password?: string;
  recaptcha?: string;
  /** Client address as the socket (or a trusted proxy) reports it: what login attempts count against. */
  ip: string;
  /**
   * The address of the connection itself. The proxy header is believed only when this is a
   * trusted proxy: `ip` would name the browser behind the proxy, which is never trusted.
   */
  peer: string;
  /** Request headers, for the proxy method. */
  headers: Record<string, string | string[] | undefined>;
}

export interface Authenticated {
  user: StoredUser;
  claims: TokenClaims;
  sessionId: string;
}

/** Logs people in, issues and checks session tokens. One per app. */
export class AuthService {
  /**
   * Every guess at a credential (a password at sign-in or in WebDAV's Basic, an API token as
   * Bearer or Basic password) counts against the same allowance per address.
   */
  private readonly throttle: GuessThrottle;

  constructor(private readonly ctx: AppContext) {
    this.throttle = new GuessThrottle(
      ctx.config.loginRateLimit,
      ctx.config.loginRateWindowSeconds * 1000,
      'too many login attempts, try again later',
      countersFor(ctx.store, 'login'),
    );
  }

  /**
   * Checks a personal API token (`fbt_…`, from `Authorization: Bearer` or a WebDAV Basic
   * password) sent from `address`. Answers the grant: `grant.user` is the user as the request may
   * act (permissions cut by the token, confined to its folder) and is what `fileAccessFor` and
   * `assertMay` must be given. Throws 401 for a wrong, revoked or expired token or a deleted
   * user, and 429 (Retry-After) once `address` made too many wrong guesses. A right token's
   * guess is forgiven at once, so parallel requests with a good token never crowd each other out.
   */
  async verifyApiToken(secret: string, address: string): Promise<ApiTokenGrant> {
    // A wrong token is a guess at a secret like a wrong password: counted with them.
    const attempt = await this.throttle.reserve(
      address,
      apiTokenSubject(secret),
      undefined,
      'too many invalid API tokens, try again later',
    );
    return await verifyApiTokenSecret(this.ctx, secret, attempt);
  }

  /** POST /api/login: returns a fresh token or throws 403 (bad credentials) / 429 (too many tries). */
  async login(input: LoginInput): Promise<string> {
    const settings = this.ctx.store.settings.get();
    switch (settings.authMethod) {
      case 'noauth':
        return this.issue(await this.noauthUser());
      case 'proxy':
        return this.issue(await this.proxyUser(input));
      case 'json':
        return this.passwordLogin(input);
      default:
        throw new AppError('internal', `auth method ${settings.authMethod} is not supported`);
    }
  }

  /** The account everyone is signed in as when the server has no authentication. */
  async noauthUser(): Promise<StoredUser> {
    const user =
      (await this.ctx.store.users.get(1)) ?? (await this.ctx.store.users.list()).find((u) => u.perm.admin);
    if (!user) throw new AppError('internal', 'no user to sign in as');
    return user;
  }

  private async passwordLogin(input: LoginInput): Promise<string> {
    const username = (input.username ?? '').normalize('NFC');
    const password = input.password ?? '';
    // Counted before anything is checked: parallel guesses cannot outrun the limit.
    const attempt = await this.throttle.reserve(input.ip, usernameKey(username));

    const { recaptcha } = this.ctx.store.settings.get().auther;
    if (recaptcha?.key && recaptcha.secret) {
      if (!(await verifyRecaptcha(recaptcha, input.recaptcha ?? ''))) throw forbidden();
    }
    const user = await this.userWithPassword(username, password);
    await attempt.succeeded();
    return this.issue(user);
  }

  /**
   * The user a username and password name, or 403; every try is counted by the same throttle as
   * logins (429 past it), so WebDAV's Basic auth is no side door for guessing passwords.
   */
  async passwordUser(username: string, password: string, ip: string): Promise<StoredUser> {
    const name = username.normalize('NFC');
    const attempt = await this.throttle.reserve(ip, usernameKey(name));
    const user = await this.userWithPassword(name, password);
    await attempt.succeeded();
    return user;
  }

  /**
   * Under json auth, a sensitive change (a password, an API token, an account) needs the caller's
   * current password: a stolen session or token must not turn into the password, or into a
   * credential that outlives it. Each check is a guess like a login's, counted by the same
   * throttle (429 past it); a wrong one answers 400.
   */
  async confirmPassword(user: StoredUser, given: string | undefined, ip: string): Promise<void> {
    if (this.ctx.store.settings.get().authMethod !== 'json') return;
    const attempt = await this.throttle.reserve(ip, usernameKey(user.username.normalize('NFC')));
    if (
      !given ||
      Buffer.byteLength(given) > MAX_PASSWORD_BYTES ||
      !(await checkPassword(given, user.passwordHash))
    ) {
      throw badRequest('the current password is incorrect');
    }
    await attempt.succeeded();
  }

  private async userWithPassword(username: string, password: string): Promise<StoredUser> {
    if (!username || !password || Buffer.byteLength(password) > MAX_PASSWORD_BYTES) {
      await spendPasswordCheckTime(password);
      throw forbidden();
    }
    const user = await this.ctx.store.users.getByUsername(username);
    if (!user) {
      await spendPasswordCheckTime(password);
      throw forbidden();
    }
    if (!(await checkPassword(password, user.passwordHash))) throw forbidden();
    return user;
  }

  private async proxyUser(input: LoginInput): Promise<StoredUser> {
    const header = this.ctx.store.settings.get().auther.header;
    if (!header) throw new AppError('internal', 'proxy authentication has no header configured');
    if (!isTrustedAddress(input.peer, this.ctx.config.trustedProxies)) throw forbidden();
    const raw = input.headers[header.toLowerCase()];
    const username = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
    if (!username) throw forbidden();
    const existing = await this.ctx.store.users.getByUsername(username);
    if (existing) return existing;
    return createAccount(this.ctx, { username }, randomPassword(22), 'proxy', { passwordIsHash: false });
  }

  /** Signup demands the captcha too when one is configured (the old server skipped it). */
  async checkSignupCaptcha(response: string): Promise<void> {
    const { recaptcha } = this.ctx.store.settings.get().auther;
    if (recaptcha?.key && recaptcha.secret && !(await verifyRecaptcha(recaptcha, response))) {
      throw forbidden('the captcha was not solved');
    }
  }

  /** A new session and its token. */
  async issue(user: StoredUser): Promise<string> {
    const lifetime = this.ctx.config.tokenExpirationTime;
    const session = await this.ctx.store.sessions.create(user.id, lifetime);
    return signToken(user, session.id, this.ctx.store.settings.get().key, lifetime);
  }

  /**
   * POST /api/renew: the old session ends, a new one starts with the user's current state. Work
   * started in the old session carries on in the new one: the successor exists and is noted
   * before the old one ends, in one synchronous step.
   */
  async renew(auth: Authenticated): Promise<string> {
    const lifetime = this.ctx.config.tokenExpirationTime;
    // In the database, for work started through any instance (kept two lifetimes). A session that
    // ended meanwhile (a parallel renewal, a logout, a password change) renews into nothing.
    const session = await this.ctx.store.sessions.renew(
      auth.sessionId,
      auth.user.id,
      lifetime,
      2 * lifetime * 1000,
    );
    if (!session) throw unauthorized('this session has ended: sign in again');
    return signToken(auth.user, session.id, this.ctx.store.settings.get().key, lifetime);
  }

  /** Ends the session, and what it was renewed into meanwhile. */
  async logout(sessionId: string, userId: number): Promise<void> {
    await this.ctx.store.sessions.logout(sessionId, userId);
  }

  /** Checks a token: valid signature, unexpired, its session live, its user present. */
  async verify(token: string | undefined): Promise<Authenticated> {
    if (!token) throw unauthorized();
    const claims = await verifyToken(token, this.ctx.store.settings.get().key);
    if (!claims?.sid) throw unauthorized();
    const user = await this.sessionUser(claims.sid, claims.user.id);
    if (!user) throw unauthorized();
    return { user, claims, sessionId: claims.sid };
  }

  /** The user of a live session (of that user, when given), or undefined: what `verify` checks. */
  private async sessionUser(sessionId: string, userId?: number): Promise<StoredUser | undefined> {
    return this.keyUser(sessionKeyOf(sessionId), userId);
  }

  private async keyUser(key: string, userId?: number): Promise<StoredUser | undefined> {
    return await this.ctx.store.users.getBySession(key, userId);
  }

  /**
   * The user of the session a request was made in, asked again by work that outlives the request
   * (auth/caller.ts): `verify`'s session checks, following renewals (a renewal ends a session and
   * starts its successor for the same client, which carries on), and the session reached. 401
   * once the session was ended (logout, a password, permission or scope change) or the user
   * deleted.
   */
  async currentSession(
    sessionKey: string,
    userId: number,
  ): Promise<{ user: StoredUser; sessionKey: string }> {
    // Asked before every step of a stream: the session as held first (one query), its renewals
    // only once it has ended.
    let latest = sessionKey;
    let user = await this.keyUser(latest, userId);
    if (!user) {
      latest = await this.ctx.store.sessions.latestKey(sessionKey);
      if (latest !== sessionKey) user = await this.keyUser(latest, userId);
    }
    if (!user) {
      throw unauthorized(
        (await this.ctx.store.users.get(userId))
          ? 'the session it was started in has ended'
          : 'the user who started it no longer exists',
      );
    }
    return { user, sessionKey: latest };
  }
}

async function verifyRecaptcha(cfg: { host: string; secret: string }, response: string): Promise<boolean> {
  if (!response) return false;
  const host = (cfg.host || 'https://www.google.com').replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${host}/recaptcha/api/siteverify`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: cfg.secret, response }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new AppError('internal', 'the captcha could not be verified');
  }
  if (!res.ok) return false;
  const body = (await res.json().catch(() => ({}))) as { success?: boolean };
  return body.success === true;
}
