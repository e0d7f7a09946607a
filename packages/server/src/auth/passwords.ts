import crypto from 'node:crypto';
import type * as Bcrypt from '@node-rs/bcrypt';
import { createRequire } from 'node:module';
import { badRequest } from '../errors.js';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently cut. */
export const MAX_PASSWORD_BYTES = 72;
export const BCRYPT_COST = 10;

let bcryptModule: Promise<typeof Bcrypt> | undefined;
/** The native bcrypt module, loaded by the first hash or compare (a server at rest needs neither). */
function bcrypt(): Promise<typeof Bcrypt> {
  bcryptModule ??= import('@node-rs/bcrypt');
  return bcryptModule;
}

let common: Set<string> | undefined;
/**
 * The word list (with its diceware list, 15 MB in memory) is loaded on the first password check,
 * not at start: most servers set passwords rarely, and the memory counts against every one.
 */
function commonPasswords(): Set<string> {
  if (!common) {
    const load = createRequire(import.meta.url);
    const { dictionary } = load('@zxcvbn-ts/language-common') as {
      dictionary: Record<string, string[]>;
    };
    common = new Set(dictionary['passwords-common']);
  }
  return common;
}

/** File Browser's password rules (contract 4.4); throws a 400 naming what is wrong. */
export function validatePassword(password: string, minimumLength: number): void {
  const min = minimumLength || 12;
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < min) throw badRequest(`password is too short, minimum length is ${min}`);
  if (bytes > MAX_PASSWORD_BYTES)
    throw badRequest(`password is too long, maximum length is ${MAX_PASSWORD_BYTES} bytes`);
  if (commonPasswords().has(password)) throw badRequest('password is too easy');
}

export async function hashPassword(password: string, cost = BCRYPT_COST): Promise<string> {
  return (await bcrypt()).hash(password, { cost });
}

let comparesStarted = 0;
/**
 * How many bcrypt compares this process has started: lets tests see that a limit stops guesses
 * before the compare, and that an unknown user costs the same compare as a known one.
 */
export function passwordComparesStarted(): number {
  return comparesStarted;
}

export async function checkPassword(password: string, passwordHash: string): Promise<boolean> {
  if (!passwordHash || Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return false;
  comparesStarted++;
  try {
    return await (await bcrypt()).compare(password, passwordHash);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;
/** Spends the time of a real bcrypt compare, so unknown usernames cannot be told apart by timing. */
export async function spendPasswordCheckTime(password: string): Promise<void> {
  dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  await checkPassword(password.slice(0, 64), await dummyHash);
}

/** A password nobody knows: for accounts that never log in with one (proxy, first admin until shown). */
export function randomPassword(bytes = 12): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function looksLikeBcryptHash(value: string): boolean {
  return /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(value);
}
