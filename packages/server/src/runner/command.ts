import path from 'node:path';
import { may } from '../auth/policy.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { fileAccessFor, type FileAccess } from '../files/access.js';
import { isInside, type Opened } from '../files/resolver.js';
import type { StoredUser } from '../store/users.js';
import { checkArgumentPaths } from './arguments.js';
import { deniedCommand, deniedOption, MULTI_CALL_BINARIES } from './deny-list.js';
import { findExecutable, type Executable } from './executable.js';
import { checkLinkOperands } from './link-sources.js';
import { runnerOptions, type RunnerOptions } from './options.js';
import { deniedPathOption } from './path-options.js';
import type { ProcessSpec } from './process.js';
import { CommandRefused, NOT_ALLOWED } from './refusal.js';
import { CommandLineError, splitCommandLine } from './words.js';

/** May this user use the command runner at all? Checked before any message is read. */
export function mayExecute(ctx: AppContext, user: StoredUser): boolean {
  return !ctx.config.disableExec && may(user.perm, 'execute') && user.commands.length > 0;
}

/**
 * Refuses commands that run other commands, by the name typed and by the real name of the file
 * (`/usr/local/bin/ll` may be a link to bash), unless the administrator allowed the name.
 */
export function checkNotRunner(
  name: string,
  args: readonly string[],
  exe: Executable,
  opts: RunnerOptions,
): void {
  if (opts.unsafeCommands.includes(name)) return;
  const realName = path.basename(exe.real);
  const why =
    deniedCommand(name) ??
    (MULTI_CALL_BINARIES.includes(realName) ? undefined : deniedCommand(realName)) ??
    deniedOption(name, args);
  if (why) {
    throw new CommandRefused(
      `Command not allowed: ${why}. An administrator can allow it in the unsafeCommands setting.`,
    );
  }
}

/** A program inside the served files could have been uploaded by a user: it is never run. */
export function checkNotUploaded(ctx: AppContext, exe: Executable, scopeReal: string): void {
  const root = path.resolve(ctx.config.root);
  if ((root !== '/' && isInside(root, exe.real)) || isInside(scopeReal, exe.real)) {
    throw new CommandRefused('Command not allowed: the program lies inside the served files.');
  }
}

/**
 * The working folder: resolved through the scope and the rules, and a folder. It stays pinned so
 * the program starts in the folder that was checked (its descriptor is the child's `cwd`).
 */
async function workingFolder(access: FileAccess, virtualDir: string): Promise<Opened> {
  let r: Opened | undefined;
  try {
    r = await access.open(virtualDir);
    if (!r.stat?.isDirectory() || !r.node) throw new CommandRefused('The working folder does not exist.');
    return r;
  } catch (err) {
    await r?.close();
    if (err instanceof CommandRefused) throw err;
    if (err instanceof AppError && err.kind === 'not_found') {
      throw new CommandRefused('The working folder does not exist.');
    }
    if (err instanceof AppError && err.status < 500) throw new CommandRefused(NOT_ALLOWED);
    throw err;
  }
}

export interface PreparedCommand extends ProcessSpec {
  /** The words typed, for logs. */
  words: string[];
  /** The working folder's real path, for logs. */
  workingFolder: string;
  /** Lets go of the pinned working folder: call once the process has started (or will not). */
  release(): Promise<void>;
}

/**
 * Turns a command line typed by `user` in the folder `virtualDir` into a process to start, or
 * refuses it (CommandRefused, whose message is for the user). Nothing runs here.
 */
export async function prepareCommand(
  ctx: AppContext,
  user: StoredUser,
  virtualDir: string,
  line: string,
): Promise<PreparedCommand> {
  if (!mayExecute(ctx, user)) throw new CommandRefused(NOT_ALLOWED);
  let words: string[];
  try {
    words = splitCommandLine(line);
  } catch (err) {
    if (err instanceof CommandLineError) throw new CommandRefused(err.message);
    throw err;
  }
  const [name, ...args] = words;
  if (name === undefined) throw new CommandRefused(NOT_ALLOWED);
  // The first word must be exactly an allow-list entry, and a bare name looked up on the PATH.
  if (!user.commands.includes(name) || name.includes('/')) throw new CommandRefused(NOT_ALLOWED);

  const opts = runnerOptions(ctx.config, ctx.store.settings.get());
  const exe = await findExecutable(name, opts.path);
  if (!exe) throw new CommandRefused(`Command not found: ${name}`);
  checkNotRunner(name, args, exe, opts);
  // `unsafeCommands` lifts the rules above, never the scope: these stay.
  const names = [name, path.basename(exe.real)];
  const pathOption = deniedPathOption(names, args);
  if (pathOption) throw new CommandRefused(`Command not allowed: ${pathOption}.`);

  const access = await fileAccessFor(ctx, user);
  checkNotUploaded(ctx, exe, access.scope.real);
  const cwd = await workingFolder(access, virtualDir);
  try {
    await checkArgumentPaths(access, cwd.virtual, args);
    await checkLinkOperands(access, cwd.virtual, names, args);
  } catch (err) {
    await cwd.close();
    throw err;
  }

  return {
    words,
    executable: exe.path,
    argv0: name,
    args,
    cwd: cwd.node!.path,
    workingFolder: cwd.real,
    release: () => cwd.close(),
    env: { PATH: opts.pathEnv, HOME: access.scope.real, LANG: 'C.UTF-8' },
    timeLimitMs: opts.timeLimitMs,
    outputLimit: opts.outputLimit,
  };
}
