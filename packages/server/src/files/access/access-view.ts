import type { RuleChecker } from './rules.js';
import type { Opened, Scope } from './resolver.js';

/**
 * A folder a server serves files from. Today every user's scope lies in the one `--root`; team
 * folders will be more roots, so an access is always made for a root it is given.
 */
export interface FileRoot {
  /** Stable name of the root (stored with shares). */
  id: string;
  /** Absolute path of the folder. */
  path: string;
}

export interface OpenOptions {
  /** Follow a final symbolic link (default); off, the link itself is the result. */
  followFinal?: boolean;
  /**
   * Check the user's rules on the result (default). The roots of a recursive listing and of a
   * search are only confined (contract 5.7 and 7); what they find is checked entry by entry.
   */
  rules?: boolean;
}

/**
 * What the quota and lock ledgers, the tree walks and the listings read of a FileAccess
 * (access.ts), which satisfies it. FileAccess holds those ledgers, and their methods take an
 * access: named here, apart from the class, that is no import circle. Only fileAccessFor makes
 * the accesses these modules are given.
 */
export interface AccessView {
  readonly root: FileRoot;
  readonly scope: Scope;
  readonly rules: RuleChecker;
  /** Whose work the access does, for the fair share of heavy work (heavy-work.ts). */
  readonly owner: string;
  check(virtual: string): boolean;
  rootPathOf(real: string): string | undefined;
  virtualOfRootPath(rootPath: string): string | undefined;
  isPrivate(real: string): boolean;
  open(virtual: string, opts?: OpenOptions): Promise<Opened>;
}
