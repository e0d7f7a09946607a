import path from 'node:path';
import type { Permissions, Rule, Sorting } from '@filebrowser/contract';
import type { AppContext } from '../../context.js';
import { forbidden, notFound } from '../../errors.js';
import type { StoredUser } from '../../store/users.js';
import { rootIsCaseInsensitive } from './case.js';
import { privateRules, serverPaths } from './private.js';
import { WriteLocks, type LockWriter } from '../change/locks.js';
import { quotaLedgerOf, type QuotaLedger } from '../change/quota.js';
import {
  isInside,
  joinVirtual,
  Scope,
  snapshot,
  type CanonicalPath,
  type Opened,
  type Resolved,
} from './resolver.js';
import { RuleChecker, type RuleOptions } from './rules.js';
import { moveJournalOf, type MoveJournal } from '../change/moves.js';
import { stagingLedgerOf, type StagingLedger } from '../change/staging.js';
import type { FileRoot, OpenOptions } from './access-view.js';

/** The root of `--root`. */
export function defaultRoot(ctx: Pick<AppContext, 'config'>): FileRoot {
  return { id: 'default', path: ctx.config.root };
}

/** Only this module can make a FileAccess: the constructor refuses anything without this token. */
const MADE_HERE: unique symbol = Symbol('FileAccess is made in files/access.ts');

/**
 * What one request may do on the disk: the confined scope of a root, the rules that filter it,
 * the server's private paths and the permissions. Every way to a file (signed-in users, public
 * shares, the command runner, hooks, uploads, previews, search, archives, listings) gets one from
 * `fileAccessFor` (or narrows one with `narrow`), and nothing reaches a served file another way.
 */
/** See `AccessParts.replacedItem`. */
export type ReplacedItem = (replaced: string, placed: string, real: string) => Promise<void>;

interface AccessParts {
  root: FileRoot;
  scope: Scope;
  rules: RuleChecker;
  perm: Permissions;
  sorting: Sorting;
  hideDotfiles: boolean;
  /** Real paths no request may reach, whatever the rules say (database, staging, cache, trash). */
  privatePaths: readonly string[];
  /** Where writes record their staging files (see files/staging.ts). */
  staging: StagingLedger;
  /** Where moves across file systems record how far they came (see files/moves.ts). */
  moves: MoveJournal;
  /** What every write checks and counts against the quotas (see files/quota.ts). */
  quota: QuotaLedger;
  /** What every write checks against WebDAV's locks (see files/locks.ts). */
  locks: WriteLocks;
  /**
   * Told when a write of this server put a file in place of another (identities, see
   * files/access/identity.ts): a save makes a new object, and what followed the old one (a share
   * link) follows it, where a file put there by anything else is not followed.
   */
  replacedItem: ReplacedItem;
  /** Where this view's `/` lies in the whole scope it was narrowed from (`/` when not narrowed). */
  base: string;
  /**
   * Whose work this access does, for the fair share of heavy work (heavy-work.ts): `user:<id>`,
   * or `server` for the server's own.
   */
  owner: string;
}

export class FileAccess {
  readonly root: FileRoot;
  readonly scope: Scope;
  readonly rules: RuleChecker;
  readonly perm: Permissions;
  readonly sorting: Sorting;
  readonly hideDotfiles: boolean;
  readonly staging: StagingLedger;
  readonly moves: MoveJournal;
  readonly quota: QuotaLedger;
  readonly locks: WriteLocks;
  readonly replacedItem: ReplacedItem;
  readonly owner: string;
  private readonly privatePaths: readonly string[];
  private readonly base: string;

  private constructor(token: typeof MADE_HERE, parts: AccessParts) {
    // TypeScript's `private` ends at compile time; the token keeps the rule at run time too.
    if (token !== MADE_HERE) throw new Error('a FileAccess can only be made by fileAccessFor');
    this.root = parts.root;
    this.scope = parts.scope;
    this.rules = parts.rules;
    this.perm = parts.perm;
    this.sorting = parts.sorting;
    this.hideDotfiles = parts.hideDotfiles;
    this.privatePaths = parts.privatePaths;
    this.staging = parts.staging;
    this.moves = parts.moves;
    this.quota = parts.quota;
    this.locks = parts.locks;
    this.replacedItem = parts.replacedItem;
    this.base = parts.base;
    this.owner = parts.owner;
  }

  /** The one place a FileAccess is constructed (the token is private to this module). */
  static make(token: typeof MADE_HERE, parts: AccessParts): FileAccess {
    return new FileAccess(token, parts);
  }

  /** File Browser's Check: hidden dotfiles, then rules, on a virtual path. */
  check(virtual: string): boolean {
    return this.rules.check(virtual);
  }

  /** Where a real path lies below the root (`/a/b`, `/` for the root itself), or undefined outside it. */
  rootPathOf(real: string): string | undefined {
    return rootPathIn(this.scope.rootReal, real);
  }

  /** The virtual path, in this access's scope, of a place below the root; undefined when out of scope. */
  virtualOfRootPath(rootPath: string): string | undefined {
    const trimmed = rootPath.replace(/\/+$/, '') || '/';
    const rootReal = this.scope.rootReal;
    const real = trimmed === '/' ? rootReal : rootReal === '/' ? trimmed : rootReal + trimmed;
    const virtual = this.scope.virtualOf(real);
    if (virtual !== undefined) return virtual;
    // Places recorded before links were resolved (older shares) name the scope as configured.
    const lexical = path.join(this.root.path, trimmed);
    const dir = this.scope.dir;
    if (!isInside(dir, lexical)) return undefined;
    return (dir === '/' ? lexical : lexical.slice(dir.length)) || '/';
  }

  /**
   * The path, in the whole scope this view was narrowed from, of a path of this view: the same
   * path unless the view is a folder (a folder token's, a shared folder's). What a user keeps by
   * path (pending uploads) is kept under this, so that the same path in two views is two things.
   */
  scopePathOf(virtual: string): string {
    return joinVirtual(this.base, virtual);
  }

  /** The path in this view of a path of the whole scope (`scopePathOf`), or undefined outside it. */
  viewPathOf(scopePath: string): string | undefined {
    if (this.base === '/') return scopePath;
    if (scopePath === this.base) return '/';
    return scopePath.startsWith(this.base + '/') ? scopePath.slice(this.base.length) : undefined;
  }

  /** A real path the server keeps for itself (the database and its side files, staging, cache, trash). */
  isPrivate(real: string): boolean {
    return this.privatePaths.some((p) => isInside(p, real));
  }

  /** The private paths at or below the real path `real`: what a walk of that folder would enter. */
  privatePathsBelow(real: string): string[] {
    return this.privatePaths.filter((p) => isInside(real, p));
  }

  /**
   * Check on both the requested path and the path it resolves to: a link inside the scope must not
   * lead around a rule (`/public/link -> /private`).
   */
  checkResolved(r: Pick<Resolved, 'virtual' | 'real'>): boolean {
    if (!this.rules.check(r.virtual) || this.isPrivate(r.real)) return false;
    const resolvedVirtual = this.scope.virtualOf(r.real);
    return (
      resolvedVirtual === undefined || resolvedVirtual === r.virtual || this.rules.check(resolvedVirtual)
    );
  }

  /** Rules only (no dotfile hiding) on both paths: the descendant check of recursive operations. */
  rulesAllowResolved(virtual: string, real: string): boolean {
    if (!this.rules.allowedByRules(virtual) || this.isPrivate(real)) return false;
    const resolvedVirtual = this.scope.virtualOf(real);
    return (
      resolvedVirtual === undefined ||
      resolvedVirtual === virtual ||
      this.rules.allowedByRules(resolvedVirtual)
    );
  }

  /**
   * Resolves a request path and holds what it reached open (see `Opened`); 403 when confinement,
   * the server's private paths or the rules refuse it. The caller closes the result.
   */
  async open(input: string | CanonicalPath, opts: OpenOptions = {}): Promise<Opened> {
    const o = await this.scope.open(input, { followFinal: opts.followFinal });
    try {
      if (this.isPrivate(o.real) || this.isPrivate(o.entry)) throw forbidden();
      if (opts.rules !== false && !this.checkResolved(o)) throw forbidden();
      return o;
    } catch (err) {
      await o.close();
      throw err;
    }
  }

  /** `open` for a decision only: what the path names, with nothing left open. */
  async resolve(input: string | CanonicalPath, opts: OpenOptions = {}): Promise<Resolved> {
    const o = await this.open(input, opts);
    await o.close();
    return snapshot(o);
  }

  /**
   * The view of someone who was handed the folder `folder` (a public share): confined to that
   * very folder, with this access's rules and private paths still written against this scope
   * (each path is re-prefixed with where the folder lies here, under both its names when it was
   * reached through a link), and the given sorting.
   */
  narrow(folder: Opened, sorting: Sorting): FileAccess {
    if (!folder.node || !folder.stat?.isDirectory()) throw forbidden();
    const bases = new Set([folder.virtual]);
    const realVirtual = this.scope.virtualOf(folder.real);
    if (realVirtual !== undefined) bases.add(realVirtual);
    return FileAccess.make(MADE_HERE, {
      root: this.root,
      scope: this.scope.narrowTo(folder.node),
      rules: new PrefixedRules(this.rules, [...bases]),
      perm: this.perm,
      sorting,
      hideDotfiles: this.hideDotfiles,
      privatePaths: this.privatePaths,
      staging: this.staging,
      moves: this.moves,
      quota: this.quota,
      locks: this.locks,
      replacedItem: this.replacedItem,
      base: this.scopePathOf(folder.virtual),
      owner: this.owner,
    });
  }
}

/**
 * Rules of a wider view applied inside a narrower one: a path of the narrow view is checked at
 * each place (`bases`) its folder has in the wide one.
 */
class PrefixedRules extends RuleChecker {
  constructor(
    private readonly wide: RuleChecker,
    private readonly bases: readonly string[],
  ) {
    super([], [], false);
  }

  private widePaths(narrowVirtual: string): string[] {
    return this.bases.map((base) =>
      narrowVirtual === '/' ? base : base === '/' ? narrowVirtual : base + narrowVirtual,
    );
  }

  override get fingerprint(): string {
    return JSON.stringify([this.wide.fingerprint, this.bases]);
  }

  override get hasRules(): boolean {
    return this.wide.hasRules;
  }

  override allowedByRules(narrowVirtual: string): boolean {
    return this.widePaths(narrowVirtual).every((p) => this.wide.allowedByRules(p));
  }

  override checkChild(dirPrefix: string, name: string): boolean {
    return this.check(dirPrefix + name);
  }

  override check(narrowVirtual: string): boolean {
    return this.widePaths(narrowVirtual).every((p) => this.wide.check(p));
  }
}

/** What an access is made for: a user, or the server itself (`serverAccess`). */
type Subject = Pick<StoredUser, 'scope' | 'rules' | 'perm' | 'sorting' | 'hideDotfiles'>;

/**
 * The file access of a user on a root (by default `--root`): the user's scope there, the global
 * rules, then the user's own, then deny rules for the server's private paths (last, so nothing
 * allows them again), with rule paths compared case-insensitively on a case-insensitive root.
 * Signed-in requests, the command runner, hooks, uploads and the owner side of public shares all
 * come through here.
 */
export async function fileAccessFor(
  ctx: AppContext,
  user: StoredUser & Confinement,
  root: FileRoot = defaultRoot(ctx),
  /** The lock tokens a WebDAV request submits (its `If` header): only those open its user's locks. */
  lockTokens?: ReadonlySet<string>,
): Promise<FileAccess> {
  const writer: LockWriter = { userId: user.id, ...(lockTokens && { tokens: lockTokens }) };
  const access = await accessFor(ctx, user, ctx.store.settings.get().rules, root, writer, `user:${user.id}`);
  return user.confinedTo === undefined ? access : confine(access, user.confinedTo, user.sorting);
}

/**
 * What `fileAccessFor` makes a user's access of, as one string: the scope, the user's and the
 * global rules, hidden dotfiles and an API token's folder. Equal terms give the same access, so
 * work that outlives its request compares them to see that its paths still mean what they meant.
 */
export function accessTerms(ctx: AppContext, user: StoredUser & Confinement): string {
  const { scope, rules, hideDotfiles, confinedTo } = user;
  return JSON.stringify([scope, rules, ctx.store.settings.get().rules, hideDotfiles, confinedTo ?? null]);
}

/** A request acting for a user in one folder of their scope only (an API token limited to it). */
export interface Confinement {
  /** The folder, as a place below the root (`/a/b`, see `FileAccess.rootPathOf`). */
  confinedTo?: string;
}

/**
 * The user's access narrowed to one folder the way a shared folder is (`narrow`): the folder is
 * found again in the user's current scope and rules on every request, so a scope moved away from
 * it or a rule now hiding it refuses the request rather than serving whatever took its place.
 */
async function confine(access: FileAccess, rootPath: string, sorting: Sorting): Promise<FileAccess> {
  const virtual = access.virtualOfRootPath(rootPath);
  if (virtual === undefined) throw notFound('the folder of this API token is no longer in reach');
  const folder = await access.open(virtual);
  try {
    if (!folder.stat?.isDirectory()) throw notFound('the folder of this API token is no longer in reach');
    return access.narrow(folder, sorting);
  } finally {
    await folder.close();
  }
}

/**
 * The server's own view of a root, for the folders it makes on a user's behalf (home folders and
 * scopes): the whole root, no user or global rules, but still confined and still blind to the
 * server's private paths.
 */
export async function serverAccess(ctx: AppContext, root: FileRoot = defaultRoot(ctx)): Promise<FileAccess> {
  const subject: Subject = {
    scope: '/',
    rules: [],
    perm: { ...SERVER_PERMISSIONS },
    sorting: { by: 'name', asc: true },
    hideDotfiles: false,
  };
  return accessFor(ctx, subject, [], root, undefined, 'server');
}

const SERVER_PERMISSIONS: Permissions = {
  admin: false,
  execute: false,
  create: true,
  rename: false,
  modify: false,
  delete: false,
  share: false,
  download: false,
};

async function accessFor(
  ctx: AppContext,
  subject: Subject,
  globalRules: readonly Rule[],
  root: FileRoot,
  writer: LockWriter | undefined,
  owner: string,
): Promise<FileAccess> {
  const scope = await Scope.open({
    root: root.path,
    scope: subject.scope,
    followExternalSymlinks: ctx.config.followExternalSymlinks,
  });
  const ruleOptions: RuleOptions = {
    caseInsensitive: await rootIsCaseInsensitive(root.path),
    onInvalid: (rule, reason) =>
      ctx.log.warn({ rule }, `rule cannot be applied as written (${reason}); failing closed`),
  };
  const userRules: Rule[] = [...subject.rules, ...privateRules(ctx.config, scope)];
  const rules = new RuleChecker([...globalRules], userRules, subject.hideDotfiles, ruleOptions);
  return FileAccess.make(MADE_HERE, {
    root,
    scope,
    rules,
    perm: subject.perm,
    sorting: subject.sorting,
    hideDotfiles: subject.hideDotfiles,
    privatePaths: serverPaths(ctx.config).private,
    staging: stagingLedgerOf(ctx.store),
    moves: moveJournalOf(ctx.store, ctx.log),
    quota: quotaLedgerOf(ctx),
    // A lock's holder is looked at as they are now, on the same root.
    locks: new WriteLocks(ctx, writer, (holder) => fileAccessFor(ctx, holder, root)),
    // A save hands on the links of the very place it saved, never another name of the same file.
    replacedItem: async (replaced, placed, real) => {
      const place = rootPathIn(scope.rootReal, real);
      if (place !== undefined) await ctx.store.shares.replaceItem(replaced, placed, place);
    },
    base: '/',
    owner,
  });
}

/** The path below the root (`/docs/a.txt`) of a real path, or undefined when it is not below it. */
function rootPathIn(rootReal: string, real: string): string | undefined {
  if (real === rootReal) return '/';
  if (!isInside(rootReal, real)) return undefined;
  return rootReal === '/' ? real : real.slice(rootReal.length);
}
