import { PERMISSION_NAMES, type Permissions } from '@filebrowser/contract';
import { forbidden } from '../errors.js';

/**
 * The permission policy: what each operation needs of a user's permissions. Routes declare the
 * operation they perform (`config.needs`, see `guardRoute` in http/guards.ts) and the few checks that depend on
 * the state of the disk (replacing a file that exists) call `assertMay` in the one service that
 * knows that state. Nothing else reads `perm.*` to allow or refuse. Which paths a user may see at
 * all is the rules' business (files/access.ts), not the policy's.
 */
export type Permission = keyof Permissions;

export const OPERATIONS = {
  /** File bytes leave the server: raw downloads, previews, subtitles, checksums, text content. */
  download: ['download'],
  /** A new file or folder: uploads, POST, tus. */
  create: ['create'],
  /** An existing file's bytes replaced: PUT, and uploads or copies over an existing file. */
  modify: ['modify'],
  rename: ['rename'],
  delete: ['delete'],
  /**
   * An existing entry that gives way to another one as a whole (a folder replaced, a link
   * replaced, or a file by a folder): that is its delete, and an overwrite like any other.
   * A file replaced by a file is `modify` only (its bytes change, as with PUT).
   */
  replace: ['modify', 'delete'],
  /** An item put back from the trash is a new entry where it goes (replacing one needs modify too). */
  restore: ['create'],
  /**
   * A copy reads the source and writes a new file: unlike File Browser, it needs download too,
   * or a user without it could copy a file into a publicly shared folder and fetch it from there.
   */
  copy: ['create', 'download'],
  /** A share link hands its files to anyone holding it: it is a download by someone else. */
  share: ['share', 'download'],
  execute: ['execute'],
  admin: ['admin'],
} as const satisfies Record<string, readonly Permission[]>;

export type Operation = keyof typeof OPERATIONS;

/** The permissions `op` needs that `perm` lacks. */
export function missingFor(perm: Permissions, op: Operation): Permission[] {
  return OPERATIONS[op].filter((p) => !perm[p]);
}

export function may(perm: Permissions, op: Operation): boolean {
  return missingFor(perm, op).length === 0;
}

/**
 * Permissions `perm` has only in part because something (an API token) cut them from `full`:
 * a refusal caused by the cut names it (`reason`) rather than a permission the user does have.
 */
export interface PermissionCut {
  full: Permissions;
  reason: string;
}

/** Throws 403 naming the missing permission(s), or what cut them. */
export function assertMay(
  perm: Permissions,
  op: Operation | readonly Operation[],
  cut?: PermissionCut,
): void {
  const ops: readonly Operation[] = typeof op === 'string' ? [op] : op;
  const lacking = [...new Set(ops.flatMap((o) => missingFor(perm, o)))];
  if (lacking.length > 0) {
    if (cut && lacking.every((p) => cut.full[p])) throw forbidden(cut.reason);
    throw forbidden(`this needs the ${lacking.join(' and ')} permission${lacking.length > 1 ? 's' : ''}`);
  }
}

/** What a read-only API token withholds: everything that changes something or acts for others. */
export const READ_ONLY_WITHHOLDS: readonly Permission[] = PERMISSION_NAMES.filter((p) => p !== 'download');

/**
 * What a token limited to one folder withholds: what reaches beyond that folder. An administrator
 * could widen their own scope, a share is listed and managed by paths of the whole scope, and a
 * command's program reads what it likes.
 */
export const FOLDER_WITHHOLDS: readonly Permission[] = ['admin', 'execute', 'share'];

/**
 * The permissions a request made with an API token has: its user's current ones, less what the
 * token withholds. Computed on every request, so taking a permission from the user takes it from
 * every token at once.
 */
export function tokenPermissions(
  perm: Permissions,
  token: { readOnly: boolean; folder: boolean },
): Permissions {
  const withheld = new Set<Permission>([
    ...(token.readOnly ? READ_ONLY_WITHHOLDS : []),
    ...(token.folder ? FOLDER_WITHHOLDS : []),
  ]);
  const cut = { ...perm };
  for (const p of withheld) cut[p] = false;
  return cut;
}

/**
 * The kinds of caller a request comes from. Each route declares what each of them reaches
 * (`RouteReach`); the guard of the route is built from that declaration (http/reach.ts), so what a
 * route says and what it enforces cannot differ.
 *
 * - `session`: signed in as the account: a session token, or WebDAV with the account password;
 * - `token`: a personal API token for the whole account, neither read-only nor limited to a folder;
 * - `readOnlyToken`: a personal API token made read-only;
 * - `folderToken`: a personal API token limited to one folder (a token may be both);
 * - `shareVisitor`: someone holding a share link (and the token its password earned), no account;
 * - `anonymous`: no credential at all.
 */
export const CALLERS = [
  'session',
  'token',
  'readOnlyToken',
  'folderToken',
  'shareVisitor',
  'anonymous',
] as const;
export type Caller = (typeof CALLERS)[number];

/**
 * What a kind of caller reaches through a route:
 *
 * - `refused`: nothing; the guard answers before the route runs (401 without an account
 *   credential, 403 naming the token for a token);
 * - `account`: what the account's permissions allow in its whole scope, less what a token withholds;
 * - `folder`: only what lies inside the token's folder: the route reaches files only through the
 *   file access, which is confined to it, and records it keeps (trash items, jobs) only of that folder;
 * - `share`: only the item a share link names, through the link's owner's current access
 *   (shares/public.ts); an account credential sent along is not even read;
 * - `open`: the route takes no credential and serves nothing of any account (sign-in, the web
 *   app's files, the health check).
 */
export type Reach = 'refused' | 'account' | 'folder' | 'share' | 'open';

export type RouteReach = Readonly<Record<Caller, Reach>>;

/** Which reaches each caller may be declared with. */
const REACHES: Record<Caller, readonly Reach[]> = {
  session: ['account', 'share', 'open'],
  token: ['account', 'refused', 'share', 'open'],
  readOnlyToken: ['account', 'refused', 'share', 'open'],
  folderToken: ['folder', 'refused', 'share', 'open'],
  shareVisitor: ['refused', 'share', 'open'],
  anonymous: ['refused', 'share', 'open'],
};

/** Methods that change nothing: the only ones a read-only token may use (PROPFIND is WebDAV's listing). */
export const READING_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND']);

/** How a route of this reach takes its callers. */
export type RouteKind = 'open' | 'share link' | 'signed in';

/** Whether a declaration describes an open route, a share-link route or a signed-in one. */
export function routeKind(reach: RouteReach): RouteKind {
  if (CALLERS.every((c) => reach[c] === 'open')) return 'open';
  if (CALLERS.every((c) => reach[c] === (c === 'anonymous' ? 'refused' : 'share'))) return 'share link';
  return 'signed in';
}

/**
 * Checks a route's declaration against the policy, at registration: a route the policy could not
 * serve as declared does not start. Answers what is wrong, or undefined.
 *
 * - every caller is declared, with a reach that caller can have;
 * - an open route is open to everyone, a share-link route serves share holders (whoever sends the
 *   link) and refuses a request without one, and a signed-in route serves the account and refuses
 *   share visitors and anonymous callers;
 * - a token narrower than a whole-account one (read-only, one folder) reaches no route that a
 *   whole-account token does not; a read-only token reaches no route that only changes things,
 *   and no route needing a permission it withholds; a folder token reaches no route needing one
 *   `FOLDER_WITHHOLDS` names.
 */
export function checkReach(
  reach: Partial<Record<Caller, unknown>> | undefined,
  methods: readonly string[],
  needs: readonly Operation[] = [],
): string | undefined {
  if (!reach || typeof reach !== 'object') return 'it declares no reach for its callers';
  for (const caller of CALLERS) {
    const r = reach[caller];
    if (!(REACHES[caller] as readonly unknown[]).includes(r)) {
      return `its reach for ${caller} is ${JSON.stringify(r)}, not one of ${REACHES[caller].join(', ')}`;
    }
  }
  const declared = reach as RouteReach;
  const kind = routeKind(declared);
  if (kind !== 'signed in') return undefined;
  if (
    declared.session !== 'account' ||
    declared.shareVisitor !== 'refused' ||
    declared.anonymous !== 'refused'
  ) {
    return 'a route that takes an account must serve sessions and refuse share visitors and anonymous callers';
  }
  if (
    declared.token === 'refused' &&
    (declared.readOnlyToken !== 'refused' || declared.folderToken !== 'refused')
  ) {
    return 'a read-only or folder token cannot reach a route that refuses whole-account tokens';
  }
  const withheld = (cut: readonly Permission[]) =>
    needs.flatMap((op) => OPERATIONS[op].filter((p) => cut.includes(p)));
  if (declared.readOnlyToken !== 'refused') {
    if (!methods.some((m) => READING_METHODS.has(m.toUpperCase()))) {
      return 'read-only tokens cannot reach a route that only changes things';
    }
    const lacking = withheld(READ_ONLY_WITHHOLDS);
    if (lacking.length > 0) return `read-only tokens withhold ${lacking.join(', ')}, which it needs`;
  }
  if (declared.folderToken !== 'refused') {
    const lacking = withheld(FOLDER_WITHHOLDS);
    if (lacking.length > 0) return `folder tokens withhold ${lacking.join(', ')}, which it needs`;
  }
  return undefined;
}

/**
 * Why a token may not use a route of this reach with this method, or undefined when it may. A
 * token read-only and limited to a folder is both kinds of caller: refused when either is.
 */
export function tokenRefusal(
  token: { readOnly: boolean; folder: boolean },
  reach: RouteReach,
  method: string,
): 'no tokens' | 'read-only' | 'folder' | undefined {
  if (reach.token === 'refused') return 'no tokens';
  const readOnly = reach.readOnlyToken === 'refused' || !READING_METHODS.has(method.toUpperCase());
  if (token.readOnly && readOnly) return 'read-only';
  if (token.folder && reach.folderToken === 'refused') return 'folder';
  return undefined;
}

/** What a PATCH of /api/resources needs: copy or rename, and modify to write over something. */
export function patchOperations(action: string, override: boolean): Operation[] | undefined {
  const base: Operation | undefined = action === 'copy' ? 'copy' : action === 'rename' ? 'rename' : undefined;
  if (!base) return undefined; // an unknown action is the handler's 400
  return override ? [base, 'modify'] : [base];
}
