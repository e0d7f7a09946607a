import crypto from 'node:crypto';
import type { Share } from '@filebrowser/contract';
import type { ShareGrantsRepo } from '../store/share-grants.js';
import type { StoredShare } from '../store/shares.js';

/** 128 random bits, URL-safe: a link cannot be guessed (the old server used 48 bits). */
export function newShareHash(): string {
  return crypto.randomBytes(16).toString('base64url');
}

export const UNIT_SECONDS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };
export const MAX_SHARE_DURATION = 2147483647;

/** The wire form of a share: never its password hash. */
export function presentShare(s: StoredShare): Share {
  return { hash: s.hash, path: s.path, userID: s.userId, expire: s.expire, hasPassword: !!s.passwordHash };
}

/** How long the access token handed out after a correct share password stays valid. */
export const ACCESS_TOKEN_SECONDS = 2 * 3600;

/**
 * A short-lived token proving the share password was entered: `<exp>.<256 random bits>`, kept in
 * the store as a hash only (store/share-grants.ts) and gone with the link, so neither a copy of
 * the database nor the server key makes one.
 */
export async function shareAccessToken(
  grants: ShareGrantsRepo,
  share: StoredShare,
  now = Date.now(),
): Promise<string> {
  const exp = Math.floor(now / 1000) + ACCESS_TOKEN_SECONDS;
  const token = `${exp}.${crypto.randomBytes(32).toString('base64url')}`;
  await grants.add(share.hash, token, exp * 1000, now);
  return token;
}

export async function checkShareAccessToken(
  grants: ShareGrantsRepo,
  share: StoredShare,
  token: string,
  now = Date.now(),
): Promise<boolean> {
  const [expText, secret, extra] = token.split('.');
  const exp = Number(expText);
  if (!secret || extra !== undefined || !Number.isInteger(exp) || exp <= Math.floor(now / 1000)) return false;
  return await grants.has(share.hash, token, now);
}
