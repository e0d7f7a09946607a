import type { Permissions } from '@filebrowser/contract';
import type { AppContext } from '../context.js';
import { forbidden } from '../errors.js';
import type { StoredUser } from '../store/users.js';
import { rootIsCaseInsensitive } from './case.js';
import { privateRules } from './private.js';
import { openScope, type CanonicalPath, type Resolved, type Scope } from './resolver.js';
import { RuleChecker } from './rules.js';

/**
 * What one request may do on the disk: the user's confined scope, the rules that filter it and the
 * permissions. Every file service takes one of these; nothing reaches the disk another way.
 */
export class FileAccess {
  constructor(
    readonly scope: Scope,
    readonly rules: RuleChecker,
    readonly perm: Permissions,
    readonly sorting: { by: string; asc: boolean },
    readonly hideDotfiles: boolean,
  ) {}

  /** File Browser's Check: hidden dotfiles, then rules, on a virtual path. */
  check(virtual: string): boolean {
    return this.rules.check(virtual);
  }

  /**
   * Check on both the requested path and the path it resolves to: a link inside the scope must not
   * lead around a rule (`/public/link -> /private`).
   */
  checkResolved(r: Pick<Resolved, 'virtual' | 'real'>): boolean {
    if (!this.rules.check(r.virtual)) return false;
    const resolvedVirtual = this.scope.virtualOf(r.real);
    return (
      resolvedVirtual === undefined || resolvedVirtual === r.virtual || this.rules.check(resolvedVirtual)
    );
  }

  /** Rules only (no dotfile hiding) on both paths: the descendant check of recursive operations. */
  rulesAllowResolved(virtual: string, real: string): boolean {
    if (!this.rules.allowedByRules(virtual)) return false;
    const resolvedVirtual = this.scope.virtualOf(real);
    return (
      resolvedVirtual === undefined ||
      resolvedVirtual === virtual ||
      this.rules.allowedByRules(resolvedVirtual)
    );
  }

  /** Resolves and checks a request path; 403 when confinement or rules refuse it. */
  async resolve(input: string | CanonicalPath, opts: { followFinal?: boolean } = {}): Promise<Resolved> {
    const r = await this.scope.resolve(input, opts);
    if (!this.checkResolved(r)) throw forbidden();
    return r;
  }
}

/** The file access of a signed-in user, with the global rules applied before the user's own. */
export async function fileAccessFor(ctx: AppContext, user: StoredUser): Promise<FileAccess> {
  const settings = ctx.store.settings.get();
  const scope = await openScope({
    root: ctx.config.root,
    scope: user.scope,
    followExternalSymlinks: ctx.config.followExternalSymlinks,
  });
  const rules = new RuleChecker(
    settings.rules,
    [...user.rules, ...privateRules(ctx.config, scope)],
    user.hideDotfiles,
    {
      caseInsensitive: await rootIsCaseInsensitive(ctx.config.root),
      onInvalid: (rule, reason) =>
        ctx.log.warn({ rule }, `rule cannot be applied as written (${reason}); failing closed`),
    },
  );
  return new FileAccess(scope, rules, user.perm, user.sorting, user.hideDotfiles);
}
