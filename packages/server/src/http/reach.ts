import type { RouteReach } from '../auth/policy.js';

/**
 * The reaches routes declare (`config.reach`, see `RouteReach` in auth/policy.ts): what each kind
 * of caller reaches through the route. The route's guard is made from it (http/guards.ts), a
 * route without one does not start, and test/security-reach.test.ts walks every route with every
 * kind of caller against it. The table in docs/security.md lists which route has which.
 */

const signedIn = (
  token: RouteReach['token'],
  readOnlyToken: RouteReach['readOnlyToken'],
  folderToken: RouteReach['folderToken'],
): RouteReach =>
  Object.freeze({
    session: 'account',
    token,
    readOnlyToken,
    folderToken,
    shareVisitor: 'refused',
    anonymous: 'refused',
  });

/**
 * Reading files and what the account keeps about them (the trash, jobs): every token; a folder
 * token inside its folder only.
 */
export const FILES = signedIn('account', 'account', 'folder');

/** Changing files (and the trash, jobs): no read-only token; a folder token inside its folder only. */
export const FILE_CHANGES = signedIn('account', 'refused', 'folder');

/** The account beyond one folder, read (its own record): no folder token. */
export const ACCOUNT = signedIn('account', 'account', 'refused');

/**
 * The account beyond one folder, changed or administered, or acting for others (shares, the
 * command runner, settings, users, the audit log): whole-account tokens only.
 */
export const ACCOUNT_CHANGES = signedIn('account', 'refused', 'refused');

/** The sign-in itself (sessions renewed and ended, API tokens made and revoked): no token at all. */
export const SESSION_ONLY = signedIn('refused', 'refused', 'refused');

/**
 * A public share link: whoever sends the link reaches its item and nothing else; an account
 * credential sent along is not read. A request without a live link is refused (401 or 404).
 */
export const SHARE_LINK: RouteReach = Object.freeze({
  session: 'share',
  token: 'share',
  readOnlyToken: 'share',
  folderToken: 'share',
  shareVisitor: 'share',
  anonymous: 'refused',
});

/** No credential taken, nothing of an account served: sign-in, the web app's files, health, docs. */
export const OPEN: RouteReach = Object.freeze({
  session: 'open',
  token: 'open',
  readOnlyToken: 'open',
  folderToken: 'open',
  shareVisitor: 'open',
  anonymous: 'open',
});
