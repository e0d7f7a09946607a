import type { Stats } from 'node:fs';
import path from 'node:path';
import type { FileAccess } from '../files/access/access.js';
import { joinVirtual, type Scope } from '../files/access/resolver.js';
import { CommandRefused } from './refusal.js';

/**
 * Confinement of command arguments to the user's scope.
 *
 * Without a shell nothing is expanded, so a program only reaches the files its arguments name. Any
 * part of an argument that can be a path is resolved as the program would resolve it (from the
 * working folder, symlinks followed) and the command is refused when one leaves the scope or is
 * hidden by the user's rules. This is a guard in depth, not a sandbox: a program may find paths by
 * other means (its own configuration, a recursive walk, a network), which is why commands that run
 * other commands are on the deny list and why the allow-list is the real boundary.
 */

/** Checking is a few lstat calls per candidate; a line with more than this many is refused. */
const MAX_CANDIDATES = 1024;

/** Characters after which a path commonly starts inside one argument (`if=/x`, `-d @/x`, `a:/x`). */
const SEPARATORS = new Set(['=', ':', '@', ',']);

/** `scheme://host/…` with a host and a scheme other than file names no local path after the colon. */
function isRemoteUrl(word: string, colon: number): boolean {
  const scheme = word.slice(0, colon);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme) || scheme.toLowerCase() === 'file') return false;
  if (!word.startsWith('//', colon + 1)) return false;
  const authority = word.slice(colon + 3).split('/')[0] ?? '';
  return authority !== '';
}

/**
 * The parts of one argument that a program might open as a path:
 * - a plain argument is a path as a whole;
 * - a short-option cluster (`-ofile`, `-xvf/x`) may carry a path after any of its leading letters,
 *   so each tail that starts after one of them counts;
 * - a long option (`--output=/x`) and any argument carry paths after `=`, `:`, `@` and `,`
 *   (`if=/x` for dd, `-d @/x`, `file:///x`), except after the colon of a remote URL.
 */
export function pathCandidates(word: string): string[] {
  if (word === '' || word === '-' || word === '--') return [];
  const out = new Set<string>();
  if (!word.startsWith('-')) {
    out.add(word);
  } else if (!word.startsWith('--')) {
    // The argument starts right after some run of option letters: `-xvf../a` may be `-x -v -f ../a`.
    for (let k = 2; k < word.length; k++) {
      out.add(word.slice(k));
      if (!/[A-Za-z0-9]/.test(word[k] as string)) break;
    }
  }
  for (let i = 0; i < word.length; i++) {
    if (!SEPARATORS.has(word[i] as string)) continue;
    if (word[i] === ':' && isRemoteUrl(word, i)) continue;
    const tail = word.slice(i + 1);
    if (tail !== '') out.add(tail);
  }
  return [...out];
}

/** Real path of `segments` (which may hold `..`) from the scope folder, as the kernel would walk them. */
async function realOf(scope: Scope, segments: readonly string[]): Promise<string> {
  return (await reachedOf(scope, segments)).real;
}

/** `realOf`, and what stands there when a walk ending in a name reached it (lstat, no link left). */
async function reachedOf(scope: Scope, segments: readonly string[]): Promise<{ real: string; stat?: Stats }> {
  if (segments.length === 0) return { real: scope.real };
  if (segments.at(-1) === '..') {
    const up = await realOf(scope, segments.slice(0, -1));
    return { real: path.dirname(up) };
  }
  // The resolver follows `..` after a symlink from the link's target, and refuses (403) any walk
  // whose parent folder or final link target lies outside the scope.
  const r = await scope.resolve({
    virtual: '/' + segments.join('/'),
    segments: [...segments],
    trailingSlash: false,
  });
  return { real: r.real, ...(r.stat && { stat: r.stat }) };
}

/**
 * The segments a program walks for `candidate` from the virtual folder `cwd`, from the scope
 * folder (`..` kept: a link before it changes where it leads), or why it is refused.
 */
function segmentsOf(scope: Scope, cwd: readonly string[], candidate: string): string[] | string {
  let base: readonly string[] = cwd;
  let rest = candidate;
  if (candidate.startsWith('~')) {
    if (candidate !== '~' && !candidate.startsWith('~/')) return 'names another user’s home folder';
    // Nothing expands `~` here, but a program might, from HOME, which is the scope folder.
    base = [];
    rest = candidate.slice(1);
  } else if (candidate.startsWith('/')) {
    const prefix = [scope.real, scope.dir].find(
      (p) => p === '/' || candidate === p || candidate.startsWith(p + '/'),
    );
    if (prefix === undefined) return 'is outside your scope';
    base = [];
    rest = prefix === '/' ? candidate : candidate.slice(prefix.length);
  }
  const segments = [...base, ...rest.split('/')].filter((s) => s !== '' && s !== '.');
  let depth = 0;
  for (const s of segments) {
    depth += s === '..' ? -1 : 1;
    if (depth < 0) return 'is outside your scope';
  }
  return segments;
}

/** `segments` with each `..` taking away the name before it: the path as written. */
function lexical(segments: readonly string[]): string[] {
  const stack: string[] = [];
  for (const s of segments) {
    if (s === '..') stack.pop();
    else stack.push(s);
  }
  return stack;
}

/** Why `candidate` (seen from the virtual folder `cwd`) is refused, or undefined when it is fine. */
async function refusalOf(
  access: FileAccess,
  cwd: readonly string[],
  candidate: string,
  noPrograms: boolean,
): Promise<string | undefined> {
  const scope = access.scope;
  const segments = segmentsOf(scope, cwd, candidate);
  if (typeof segments === 'string') return segments;
  const stack = lexical(segments);
  let real: string;
  let stat: Stats | undefined;
  try {
    ({ real, stat } = await reachedOf(scope, segments));
  } catch {
    return 'is outside your scope';
  }
  if (!scope.allows(real)) return 'is outside your scope';
  if (!access.rulesAllowResolved('/' + stack.join('/'), real)) return 'is hidden by your rules';
  if (noPrograms) {
    if (stat?.isFile() && (stat.mode & 0o111) !== 0) {
      return "is a program (its execute bit is set): without the runner's sandbox (bubblewrap), nothing from the served files runs, not even through another program";
    }
  }
  return undefined;
}

/**
 * Refuses (CommandRefused) the command when an argument reaches outside the scope, from the
 * virtual working folder `cwdVirtual`.
 */
export async function checkArgumentPaths(
  access: FileAccess,
  cwdVirtual: string,
  args: readonly string[],
  /**
   * Without a sandbox: no `..` (a folder moved meanwhile re-aims it), and no file with an execute
   * bit (a program that runs what it is given would run it as the server). `prefixes`: the
   * program makes names by appending to its arguments (path-options.ts, `namesByPrefix`).
   */
  opts: { noParent?: boolean; noPrograms?: boolean; prefixes?: boolean } = {},
): Promise<void> {
  const cwd = cwdVirtual.split('/').filter((s) => s !== '');
  const checks: Array<{ arg: string; candidate: string }> = [];
  for (const arg of args) {
    for (const candidate of pathCandidates(arg)) {
      checks.push({ arg, candidate });
      // A program that appends to it (split's PREFIX) writes beside it: the scope folder as a
      // prefix writes its siblings.
      if (opts.prefixes && !candidate.endsWith('/')) checks.push({ arg, candidate: candidate + 'x' });
    }
    // A `~` form is also a plain relative name for programs that do not expand it.
    if (arg.startsWith('~')) checks.push({ arg, candidate: './' + arg });
  }
  if (checks.length > MAX_CANDIDATES) throw new CommandRefused('Command not allowed: too many arguments.');
  for (const { arg, candidate } of checks) {
    const why =
      opts.noParent && candidate.split('/').includes('..')
        ? 'goes up with "..": without the runner\'s sandbox (bubblewrap), a folder moved while the command runs would make it lead elsewhere'
        : await refusalOf(access, cwd, candidate, opts.noPrograms ?? false);
    if (why) {
      const shown =
        arg === candidate ? JSON.stringify(arg) : `${JSON.stringify(candidate)} in ${JSON.stringify(arg)}`;
      throw new CommandRefused(`Command not allowed: the path ${shown} ${why}.`);
    }
  }
}

/**
 * The virtual path of the directory entry an operand names, its folders resolved the way the
 * kernel walks them (links followed) but its last name not followed: what `cp`, `mv` and `ln`
 * act on. Undefined when it lies outside the scope (the argument check refuses those first).
 * A `~` is not expanded: those programs take it as a name.
 */
export async function operandEntry(
  access: FileAccess,
  cwdVirtual: string,
  operand: string,
): Promise<string | undefined> {
  const scope = access.scope;
  const cwd = cwdVirtual.split('/').filter((s) => s !== '');
  const segments = segmentsOf(scope, cwd, operand.startsWith('~') ? './' + operand : operand);
  if (typeof segments === 'string') return undefined;
  const last = segments.at(-1);
  try {
    if (last === undefined || last === '..') return scope.virtualOf(await realOf(scope, segments));
    const folder = scope.virtualOf(await realOf(scope, segments.slice(0, -1)));
    return folder === undefined ? undefined : joinVirtual(folder, last);
  } catch {
    return undefined;
  }
}
