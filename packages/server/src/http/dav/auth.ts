import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ServerContext } from '../../services.js';
import { AppError } from '../../errors.js';
import { isTrustedAddress } from '../../auth/ip.js';
import type { StoredUser } from '../../store/users.js';
import { apiTokenLabel, isApiTokenSecret, type ApiTokenGrant } from '../../auth/api-tokens.js';
import { credentialRefused } from '../../audit/http.js';
import { usernameKey } from '../../auth/usernames.js';
import type { Confinement } from '../../files/access/access.js';

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="File Browser WebDAV", charset="UTF-8"' };

/** 401 with the Basic challenge, so clients ask for (or send) credentials. */
export const challenge = (message = '') => new AppError('unauthorized', message, CHALLENGE);

/** Why a password is refused when the administrator turned WebDAV passwords off: what to use instead. */
export const TOKENS_ONLY =
  'WebDAV takes API tokens only on this server: make one in Settings → Profile → API tokens';

/** How long a checked username and secret are trusted without checking them again. */
const REMEMBER_MS = 60_000;
const REMEMBER_MAX = 1000;

interface Remembered {
  userId: number;
  /** The user's `updatedAt` when checked: a changed password or account forgets the entry. */
  updatedAt: number;
  until: number;
}

/**
 * Credentials that passed recently, by a keyed hash of username and secret: clients send Basic
 * auth on every request, and a bcrypt check each time would make every PROPFIND cost tens of
 * milliseconds. The key is per process, so the hashes are of no use outside it; each app (each
 * database) has its own entries.
 */
const rememberedBy = new WeakMap<ServerContext, Map<string, Remembered>>();
const HASH_KEY = crypto.randomBytes(32);

function credentialKey(username: string, secret: string): string {
  return crypto.createHmac('sha256', HASH_KEY).update(username).update('\0').update(secret).digest('base64');
}

/**
 * The user a WebDAV client's Basic credentials name. A personal API token (`fbt_…`) as the
 * password acts as it does on the API: the user's current permissions less what the token
 * withholds, confined to its folder, checked on every request (cheap, and a revocation takes
 * effect at once). Otherwise the secret is the account password, where the `webdavPasswords`
 * setting allows it. Throws 401 for wrong or refused credentials, 429 past the login or token
 * throttle.
 */
export async function davCredentials(
  ctx: ServerContext,
  username: string,
  secret: string,
  ip: string,
  /** Told the token a request came with, when it came with one. */
  onToken: (grant: ApiTokenGrant) => void = () => {},
): Promise<StoredUser & Confinement> {
  if (isApiTokenSecret(secret)) {
    let grant: ApiTokenGrant;
    try {
      grant = await ctx.auth.verifyApiToken(secret, ip);
    } catch (err) {
      // With the challenge, so that the client asks its user again.
      if (err instanceof AppError && err.kind === 'unauthorized') throw challenge(err.message);
      throw err;
    }
    // The username must be the token's owner: a token is not a key to whichever name is typed.
    if (usernameKey(username) !== usernameKey(grant.owner.username)) {
      throw challenge('this API token belongs to another user');
    }
    onToken(grant);
    return grant.user;
  }
  // Checked before the remembered credentials, so that turning passwords off takes effect at once.
  if (!ctx.store.settings.get().webdavPasswords) throw challenge(TOKENS_ONLY);
  let remembered = rememberedBy.get(ctx);
  if (!remembered) {
    remembered = new Map();
    rememberedBy.set(ctx, remembered);
  }
  const key = credentialKey(username, secret);
  const now = Date.now();
  const known = remembered.get(key);
  if (known && known.until > now) {
    const user = await ctx.store.users.get(known.userId);
    if (user && user.updatedAt === known.updatedAt) return user;
  }
  remembered.delete(key);
  let user: StoredUser;
  try {
    user = await ctx.auth.passwordUser(username, secret, ip);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'forbidden') throw challenge('wrong username or password');
    throw err;
  }
  if (remembered.size >= REMEMBER_MAX) {
    for (const [k, v] of remembered)
      if (v.until <= now || remembered.size >= REMEMBER_MAX) remembered.delete(k);
  }
  remembered.set(key, { userId: user.id, updatedAt: user.updatedAt, until: now + REMEMBER_MS });
  return user;
}

function basicCredentials(request: FastifyRequest): { username: string; secret: string } | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** The user of a WebDAV request, by the server's authentication method. */
export async function davUser(
  ctx: ServerContext,
  request: FastifyRequest,
): Promise<StoredUser & Confinement> {
  const settings = ctx.store.settings.get();
  switch (settings.authMethod) {
    case 'noauth':
      return await ctx.auth.noauthUser();
    case 'proxy': {
      const header = settings.auther.header.toLowerCase();
      if (!header || !isTrustedAddress(request.socket.remoteAddress ?? '', ctx.config.trustedProxies)) {
        throw challenge();
      }
      const raw = request.headers[header];
      const name = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
      const user = name ? await ctx.store.users.getByUsername(name) : undefined;
      if (!user) throw challenge();
      return user;
    }
    case 'json': {
      const basic = basicCredentials(request);
      if (!basic) throw challenge();
      try {
        return await davCredentials(ctx, basic.username, basic.secret, request.ip, (grant) => {
          request.apiToken = grant;
        });
      } catch (err) {
        // Wrong credentials answer 401 here (a challenge), not 403 as on /api/login.
        if (err instanceof AppError && (err.kind === 'unauthorized' || err.kind === 'too_many_requests')) {
          const token = isApiTokenSecret(basic.secret) ? apiTokenLabel(basic.secret) : undefined;
          credentialRefused(ctx, request, {
            username: basic.username,
            status: err.status,
            via: token ? `webdav, API token${token.id ? ` ${token.id}` : ''}` : 'webdav',
          });
        }
        throw err;
      }
    }
    default:
      throw challenge(`WebDAV does not support the ${settings.authMethod} authentication method`);
  }
}
