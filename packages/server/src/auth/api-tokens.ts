import crypto from 'node:crypto';
import {
  API_TOKEN_PREFIX,
  type ApiToken,
  type ApiTokenRequest,
  type NewApiToken,
} from '@filebrowser/contract';
import type { AppContext } from '../context.js';
import { badRequest, conflict, notFound, unauthorized } from '../errors.js';
import { fileAccessFor, type Confinement } from '../files/access/access.js';
import { canonicalise } from '../files/access/resolver.js';
import type { StoredApiToken } from '../store/tokens.js';
import type { StoredUser } from '../store/users.js';
import { tokenPermissions, type PermissionCut } from './policy.js';
import type { Reservation } from './rate-limit.js';

/** How many tokens one user may hold: enough for every client, few enough to list on one page. */
export const MAX_TOKENS_PER_USER = 100;

/** A use is written to the database at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

const ID_PATTERN = /^[0-9a-f]{16}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** What a request made with a token acts as. */
export interface ApiTokenGrant {
  /**
   * The user as this request may act: their current permissions less what the token withholds,
   * and confined to the token's folder. Give this to `fileAccessFor`, never `owner`.
   */
  user: StoredUser & Confinement;
  /** The user as stored. */
  owner: StoredUser;
  token: StoredApiToken;
  /** For `assertMay`: refusals the token caused name the token. */
  cut: PermissionCut;
}

/** Characters of a token's public id. */
const ID_LENGTH = 16;
/** A token's secret inside any text: its id kept, the rest of it dropped by `nameTried`. */
const SECRET_ANYWHERE = /fbt_([0-9a-f]{16})_[A-Za-z0-9_-]*/g;

/** True when a credential has the shape of an API token secret (`fbt_…`), e.g. a Basic password. */
export function isApiTokenSecret(value: string): boolean {
  return value.startsWith(API_TOKEN_PREFIX);
}

function hashSecret(secret: string): Buffer {
  return crypto.createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * How a refused token is named in the log and the audit record: `fbt_<id>`, its public part (the
 * id is shown in listings; the secret never is), or empty when it is not even shaped like one.
 */
export function apiTokenLabel(value: string): { name: string; id?: string } {
  const id = parse(value)?.id;
  return id ? { name: `${API_TOKEN_PREFIX}${id}`, id } : { name: '' };
}

/**
 * A name a sign-in was tried with, as it may be logged and recorded: a token's secret typed where
 * a username goes (a client's Basic user field, the login form) is named by its public part only.
 */
export function nameTried(username: string): string {
  // Wherever a secret stands in it (after a blank, a zero-width space, a name): its prefix and id,
  // which is what `apiTokenLabel` names; a value that merely starts like one is cut the same way.
  const labelled = username.replace(SECRET_ANYWHERE, `${API_TOKEN_PREFIX}$1`);
  return isApiTokenSecret(labelled) ? labelled.slice(0, API_TOKEN_PREFIX.length + ID_LENGTH) : labelled;
}

/** What guesses at tokens are counted against: the id a guess names (any malformed one is one subject). */
export function apiTokenSubject(value: string): string {
  return `api-token:${parse(value)?.id ?? ''}`;
}

/** `fbt_<id>_<secret>` split into its parts, or undefined when it is not one. */
function parse(value: string): { id: string; secret: string } | undefined {
  if (!isApiTokenSecret(value)) return undefined;
  const rest = value.slice(API_TOKEN_PREFIX.length);
  const id = rest.slice(0, ID_LENGTH);
  const secret = rest.slice(ID_LENGTH + 1);
  if (rest[ID_LENGTH] !== '_' || !ID_PATTERN.test(id) || !SECRET_PATTERN.test(secret)) return undefined;
  return { id, secret };
}

/**
 * Checks a token secret and answers what it may do, or throws 401. The secret is 256 random bits,
 * so a fast hash is enough; it is compared in constant time. The caller has counted the guess
 * (`reservation`); a right one is forgiven.
 */
export async function verifyApiTokenSecret(
  ctx: AppContext,
  value: string,
  reservation: Reservation,
  now = Date.now(),
): Promise<ApiTokenGrant> {
  const parts = parse(value);
  const token = parts && (await ctx.store.apiTokens.get(parts.id));
  const expected = token ? Buffer.from(token.secretHash, 'hex') : crypto.randomBytes(32);
  const given = hashSecret(parts?.secret ?? value);
  if (!crypto.timingSafeEqual(expected, given) || !token) throw unauthorized('the API token is not valid');
  const grant = await liveGrant(ctx, token, now);
  await reservation.succeeded(now);
  if (now - token.lastUsedAt >= LAST_USED_RESOLUTION_MS) await ctx.store.apiTokens.touch(token.id, now);
  return grant;
}

/** What a token whose secret was checked may do now: 401 once it expired or its owner is gone. */
async function liveGrant(ctx: AppContext, token: StoredApiToken, now: number): Promise<ApiTokenGrant> {
  if (token.expiresAt !== 0 && token.expiresAt <= now) throw unauthorized('the API token has expired');
  const owner = await ctx.store.users.get(token.userId);
  // Gone with its owner (the rows go together; a request may read between the two).
  if (!owner) throw unauthorized('the API token was revoked');
  return grantOf(owner, token);
}

/**
 * What the token `id`, whose secret a request proved, may do now: the checks `verifyApiTokenSecret`
 * makes after the secret, run again for work that outlives that request (auth/caller.ts). 401
 * once the token was revoked or expired or its owner deleted.
 */
export async function currentApiTokenGrant(
  ctx: AppContext,
  id: string,
  now = Date.now(),
): Promise<ApiTokenGrant> {
  const token = await ctx.store.apiTokens.get(id);
  if (!token) throw unauthorized('the API token was revoked');
  return await liveGrant(ctx, token, now);
}

function grantOf(owner: StoredUser, token: StoredApiToken): ApiTokenGrant {
  const folder = token.rootPath !== '';
  const user: StoredUser & Confinement = {
    ...owner,
    perm: tokenPermissions(owner.perm, { readOnly: token.readOnly, folder }),
    ...(folder && { confinedTo: token.rootPath }),
  };
  const what = token.readOnly ? 'is read-only' : 'is limited to one folder';
  return { user, owner, token, cut: { full: owner.perm, reason: `the API token “${token.name}” ${what}` } };
}

/** A token as listings show it; its folder as a path in the user's current scope. */
async function present(ctx: AppContext, owner: StoredUser, token: StoredApiToken): Promise<ApiToken> {
  let folder = '';
  let folderMissing = false;
  if (token.rootPath) {
    const access = await fileAccessFor(ctx, owner).catch(() => undefined);
    const virtual = access?.virtualOfRootPath(token.rootPath);
    folder = virtual ?? token.rootPath;
    folderMissing = virtual === undefined;
  }
  return {
    id: token.id,
    userID: token.userId,
    name: token.name,
    created: Math.floor(token.createdAt / 1000),
    lastUsed: Math.floor(token.lastUsedAt / 1000),
    expires: Math.floor(token.expiresAt / 1000),
    readOnly: token.readOnly,
    folder,
    folderMissing,
  };
}

export async function listApiTokens(ctx: AppContext, owner: StoredUser): Promise<ApiToken[]> {
  return Promise.all((await ctx.store.apiTokens.listByUser(owner.id)).map((t) => present(ctx, owner, t)));
}

/** Makes a token for `owner`; the answer is the only place its secret ever appears. */
export async function createApiToken(
  ctx: AppContext,
  owner: StoredUser,
  request: Omit<ApiTokenRequest, 'current_password'>,
  now = Date.now(),
): Promise<NewApiToken> {
  const name = request.name.normalize('NFC').trim();
  if (!name) throw badRequest('the token needs a name');
  if (/\p{Cc}/u.test(name)) throw badRequest('the token name cannot contain control characters');
  if ((await ctx.store.apiTokens.countByUser(owner.id)) >= MAX_TOKENS_PER_USER) {
    throw conflict(`a user can hold at most ${MAX_TOKENS_PER_USER} API tokens; revoke one first`);
  }
  const folder = request.folder ? canonicalise(request.folder).virtual : '/';
  const rootPath = folder !== '/' ? await folderPlace(ctx, owner, folder) : '';
  const id = crypto.randomBytes(8).toString('hex');
  const secret = crypto.randomBytes(32).toString('base64url');
  const token: StoredApiToken = {
    id,
    userId: owner.id,
    name,
    secretHash: hashSecret(secret).toString('hex'),
    readOnly: request.readOnly,
    rootPath,
    createdAt: now,
    expiresAt: request.expiresInDays > 0 ? now + request.expiresInDays * 86_400_000 : 0,
    lastUsedAt: 0,
  };
  await ctx.store.apiTokens.create(token);
  return { ...(await present(ctx, owner, token)), secret: `${API_TOKEN_PREFIX}${id}_${secret}` };
}

/**
 * Where a folder of the user's scope lies below the root: the token keeps that, so that it names
 * the same folder when the scope changes (and nothing once the scope no longer holds it).
 */
async function folderPlace(ctx: AppContext, owner: StoredUser, folder: string): Promise<string> {
  const access = await fileAccessFor(ctx, owner);
  const target = await access.resolve(folder);
  if (!target.stat?.isDirectory()) throw badRequest('the folder of a token must be an existing folder');
  const place = access.rootPathOf(target.real);
  if (place === undefined) throw badRequest('the folder of a token must lie inside the served folder');
  return place;
}

/** Revokes a token of `owner`; 404 when they have no token with this id. */
export async function revokeApiToken(ctx: AppContext, owner: StoredUser, id: string): Promise<void> {
  if (!(await ctx.store.apiTokens.delete(id, owner.id))) throw notFound();
}
