import crypto from 'node:crypto';

/**
 * Staging files: where a write puts its bytes before one rename puts them in place. They sit
 * beside their target (so the rename is atomic), and nobody ever sees them: listings, search,
 * archives, copies and direct requests skip their names (`isStagingName`), and one left by a
 * process that died mid-write is removed at the next start (`StagingLedger.sweep`).
 */

/** A staging name beside the target: same folder (so rename is atomic), hidden, unguessable. */
export function stagingName(name: string): string {
  return `.${name.slice(0, 100)}.fb-${crypto.randomBytes(6).toString('hex')}.tmp`;
}

/** Exactly the names `stagingName` makes. */
const STAGING = /^\..*\.fb-[0-9a-f]{12}\.tmp$/s;

/** Whether a name is one `stagingName` makes (cheap for the names of a big folder). */
export function isStagingName(name: string): boolean {
  return name.charCodeAt(0) === 46 && name.endsWith('.tmp') && STAGING.test(name);
}
