import crypto from 'node:crypto';
import type { Share } from '@filebrowser/contract';
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

function mac(key: string, hash: string, passwordHash: string, exp: number): string {
  return crypto
    .createHmac('sha256', Buffer.from(key, 'base64'))
    .update(`share:${hash}:${passwordHash}:${exp}`)
    .digest('base64url');
}

/**
 * A short-lived token proving the share password was entered: `<exp>.<mac>`. It is bound to the
 * share's password hash, so a share deleted and recreated under another password voids it.
 */
export function shareAccessToken(key: string, share: StoredShare, now = Date.now()): string {
  const exp = Math.floor(now / 1000) + ACCESS_TOKEN_SECONDS;
  return `${exp}.${mac(key, share.hash, share.passwordHash, exp)}`;
}

export function checkShareAccessToken(
  key: string,
  share: StoredShare,
  token: string,
  now = Date.now(),
): boolean {
  const [expText, given] = token.split('.');
  const exp = Number(expText);
  if (!given || !Number.isInteger(exp) || exp <= Math.floor(now / 1000)) return false;
  const expected = Buffer.from(mac(key, share.hash, share.passwordHash, exp));
  const actual = Buffer.from(given);
  return expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
}
