import type { Permissions, UserInput } from '@filebrowser/contract';
import { may } from './policy.js';
import type { AppContext } from '../context.js';
import { AppError, badRequest, forbidden, notFound } from '../errors.js';
import { validateRules } from '../rules/validate.js';
import type { Store } from '../store/index.js';
import { inTurn, type Turns } from '../store/in-turn.js';
import { ALL_PERMISSIONS, normaliseSorting, type NewUser, type StoredUser } from '../store/users.js';
import { ensureScopeFolder, homeConflict, homeScope, normaliseScope } from './homes.js';
import { hashPassword, validatePassword } from './passwords.js';
import { checkUsername } from './usernames.js';
import { oncePerStore } from '../store/once-per-store.js';

/** How an account comes to exist decides what it may be granted. */
export type AccountOrigin = 'admin' | 'signup' | 'proxy' | 'cli' | 'setup';

function checkPermissions(perm: Permissions): void {
  if (perm.share && !perm.download) throw badRequest('permission to share requires permission to download');
}

function checkFields(data: UserInput): void {
  if (data.uploadsLimit !== undefined && (data.uploadsLimit < 1 || data.uploadsLimit > 10)) {
    throw badRequest('uploads limit must be between 1 and 10');
  }
  if (data.rules) validateRules(data.rules, 'user');
}

/**
 * Builds and stores a new account from the global defaults overlaid with `data`.
 * `password` is plain text unless `passwordIsHash` (imports and quick setup keep bcrypt hashes).
 */
export async function createAccount(
  ctx: AppContext,
  data: UserInput,
  password: string,
  origin: AccountOrigin,
  opts: { passwordIsHash?: boolean; createHome?: boolean } = {},
): Promise<StoredUser> {
  const settings = ctx.store.settings.get();
  const username = checkUsername(data.username, await ctx.store.users.list());
  if (await ctx.store.users.getByUsername(username))
    throw new AppError('conflict', 'a user with this username already exists');
  checkFields(data);

  let passwordHash = password;
  if (!opts.passwordIsHash) {
    if (!password) throw badRequest('password is required');
    validatePassword(password, settings.minimumPasswordLength);
    passwordHash = await hashPassword(password, ctx.config.bcryptCost);
  }

  const d = settings.defaults;
  const perm = { ...d.perm, ...data.perm };
  const user: NewUser = {
    username,
    passwordHash,
    scope: data.scope ?? d.scope,
    locale: data.locale || d.locale || 'en',
    lockPassword: data.lockPassword ?? false,
    viewMode: data.viewMode || d.viewMode || 'list',
    singleClick: data.singleClick ?? d.singleClick,
    redirectAfterCopyMove: data.redirectAfterCopyMove ?? d.redirectAfterCopyMove,
    perm,
    commands: data.commands ?? d.commands ?? [],
    sorting: normaliseSorting(data.sorting ?? d.sorting),
    rules: data.rules ?? [],
    hideDotfiles: data.hideDotfiles ?? d.hideDotfiles,
    dateFormat: data.dateFormat ?? d.dateFormat,
    aceEditorTheme: data.aceEditorTheme ?? d.aceEditorTheme ?? '',
    uploadsLimit: data.uploadsLimit ?? d.uploadsLimit ?? 5,
    webdav: data.webdav ?? false,
    quota: data.quota ?? d.quota ?? 0,
  };

  // Accounts nobody vetted never start with power over the server or other users.
  if (origin === 'signup' || origin === 'proxy') {
    user.perm = { ...user.perm, admin: false, execute: false };
    user.commands = [];
    user.lockPassword = origin === 'proxy';
    user.scope = d.scope;
    user.webdav = false;
  }
  if (user.perm.admin) {
    user.perm = { ...ALL_PERMISSIONS };
    user.lockPassword = false;
  }
  checkPermissions(user.perm);

  const wantsHome =
    opts.createHome ??
    ((origin === 'signup' || origin === 'proxy' || !user.scope.trim()) && settings.createUserDir);
  // The home is checked against the users stored and given in one turn: two sign-ups that map to
  // one home (`race1`, `ra..ce1`), sent at once, each passed the check before either was stored.
  return inserting(ctx.store)('accounts', async () => {
    if (wantsHome) {
      user.scope = homeScope(settings.userHomeBasePath, username);
      const conflict = await homeConflict(ctx, user.scope, await ctx.store.users.list());
      if (conflict) throw new AppError('conflict', conflict);
    }
    user.scope = normaliseScope(user.scope || '/');
    await ensureScopeFolder(ctx, user.scope, settings.dirMode, { fresh: wantsHome });
    return await ctx.store.users.create(user);
  });
}

/** New accounts are stored one at a time per database, across its instances (`inTurn`). */
const insertTurns = oncePerStore<Turns>();
function inserting(store: Store): Turns {
  return insertTurns(store, () => inTurn(store.lockLine));
}

/** Fields a user may change on their own account (contract 11.4). */
const SELF_FIELDS = new Set([
  'locale',
  'viewMode',
  'singleClick',
  'redirectAfterCopyMove',
  'sorting',
  'hideDotfiles',
  'dateFormat',
  'aceEditorTheme',
  'uploadsLimit',
  'password',
]);
const ADMIN_FIELDS = new Set([
  ...SELF_FIELDS,
  'username',
  'scope',
  'lockPassword',
  'perm',
  'commands',
  'rules',
  'webdav',
  'quota',
]);
/**
 * Changing any of these needs the caller's current password under json auth: what a user may
 * reach (scope, rules, permissions, commands, quota) and how they sign in. An administrator's
 * API token, which never carries the password, cannot change them.
 */
export const SENSITIVE_FIELDS = [
  'all',
  'username',
  'password',
  'scope',
  'rules',
  'quota',
  'commands',
  'perm',
  'lockpassword',
  'webdav',
];

export interface UpdateResult {
  user: StoredUser;
  /** The change alters what existing sessions stand for (password, permissions, scope, name): they must end. */
  revokeSessions: boolean;
}

/**
 * Applies PUT /api/users/{id}: `which` lists the fields to write, ["all"] (or nothing) replaces
 * the whole record (admins only). Returns the saved user.
 */
export async function updateAccount(
  ctx: AppContext,
  caller: StoredUser,
  target: StoredUser,
  which: string[],
  data: UserInput,
): Promise<UpdateResult> {
  const settings = ctx.store.settings.get();
  const isAdmin = may(caller.perm, 'admin');
  const fullReplace = which.length === 0 || (which.length === 1 && which[0]?.toLowerCase() === 'all');
  if (fullReplace && !isAdmin) throw forbidden();
  const fields = fullReplace ? [...ADMIN_FIELDS] : which.map(canonicalField);
  for (const f of fields) {
    if (!ADMIN_FIELDS.has(f)) throw badRequest(`unknown user field: ${f}`);
    if (!isAdmin && !SELF_FIELDS.has(f)) throw forbidden();
  }
  checkFields(data);

  const next: StoredUser = structuredClone(target);
  let revoke = false;
  for (const f of fields) {
    switch (f) {
      case 'password': {
        const pw = data.password ?? '';
        if (fullReplace && !pw) break; // blank on the admin form keeps the password
        if (!isAdmin && target.lockPassword) throw forbidden();
        validatePassword(pw, settings.minimumPasswordLength);
        next.passwordHash = await hashPassword(pw, ctx.config.bcryptCost);
        revoke = true;
        break;
      }
      case 'username':
        if (data.username !== undefined && data.username !== target.username) {
          const others = (await ctx.store.users.list()).filter((u) => u.id !== target.id);
          next.username = checkUsername(data.username, others);
        }
        break;
      case 'scope':
        if (data.scope !== undefined) next.scope = normaliseScope(data.scope || '/');
        break;
      case 'perm':
        if (data.perm) next.perm = { ...next.perm, ...data.perm };
        break;
      case 'sorting':
        if (data.sorting) next.sorting = normaliseSorting(data.sorting);
        break;
      case 'rules':
        if (data.rules) next.rules = data.rules;
        break;
      case 'commands':
        if (data.commands) next.commands = data.commands;
        break;
      default: {
        const value = (data as Record<string, unknown>)[f];
        if (value !== undefined) (next as unknown as Record<string, unknown>)[f] = value;
      }
    }
  }
  if (next.perm.admin) {
    next.perm = { ...ALL_PERMISSIONS };
    next.lockPassword = false;
  }
  checkPermissions(next.perm);
  if (target.perm.admin && !next.perm.admin && (await ctx.store.users.countAdmins()) <= 1) {
    throw forbidden('the last administrator cannot be demoted');
  }
  if (next.scope !== target.scope) await ensureScopeFolder(ctx, next.scope, settings.dirMode);
  if (
    permissionsChanged(target.perm, next.perm) ||
    next.scope !== target.scope ||
    next.username !== target.username
  ) {
    revoke = true;
  }
  return { user: await ctx.store.users.update(next), revokeSessions: revoke };
}

/** Any change counts: the token's copy of the permissions, which the interface acts on, is then wrong. */
function permissionsChanged(before: Permissions, after: Permissions): boolean {
  return (Object.keys(before) as (keyof Permissions)[]).some((k) => before[k] !== after[k]);
}

function canonicalField(name: string): string {
  const lower = name.toLowerCase();
  for (const f of ADMIN_FIELDS) if (f.toLowerCase() === lower) return f;
  return name;
}

export async function deleteAccount(ctx: AppContext, id: number): Promise<void> {
  const target = await ctx.store.users.get(id);
  if (!target) throw notFound();
  if (target.perm.admin && (await ctx.store.users.countAdmins()) <= 1) {
    throw forbidden('the last administrator cannot be deleted');
  }
  await ctx.store.transaction(async (tx) => {
    // A removed account's links must not outlive it, nor pass to a later user with its id.
    await tx.shares.deleteByUser(id);
    // The foreign key would take them too; said here so the rule does not hang on a pragma.
    await tx.apiTokens.deleteByUser(id);
    await tx.users.delete(id);
  });
  // Its pending uploads went with it: what they held of quotas is free (their staging files go
  // with the uploads' sweep), and the instances holding them are told.
  await ctx.store.reservations.forgetEndedUploads();
  await ctx.store.notices.publish('uploads', { here: true });
}
