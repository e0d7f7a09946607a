import { PERMISSION_NAMES, type Permissions } from '@filebrowser/contract';
import { forbidden } from '../errors.js';

/**
 * The permission policy: what each operation needs of a user's permissions. Routes declare the
 * operation they perform (see `requireUser` in http/guards.ts) and the few checks that depend on
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

/** What a PATCH of /api/resources needs: copy or rename, and modify to write over something. */
export function patchOperations(action: string, override: boolean): Operation[] | undefined {
  const base: Operation | undefined = action === 'copy' ? 'copy' : action === 'rename' ? 'rename' : undefined;
  if (!base) return undefined; // an unknown action is the handler's 400
  return override ? [base, 'modify'] : [base];
}
