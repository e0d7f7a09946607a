import path from 'node:path';
import { may } from '../auth/policy.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { fileAccessFor, type FileAccess } from '../files/access/access.js';
import { statFileSystem, type Pinned } from '../files/access/anchor.js';
import { maskPrivatePaths } from '../files/access/private.js';
import { formatBytes } from '../files/change/quota-hold.js';
import { remeasureTrash } from '../files/change/trash.js';
import { isInside, type Opened } from '../files/access/resolver.js';
import { LockedError } from '../files/change/locks.js';
import type { StoredUser } from '../store/users.js';
import { checkArgumentPaths } from './arguments.js';
import { deniedCommand, deniedOption, deniedProgramArgument, MULTI_CALL_BINARIES } from './deny-list.js';
import { findExecutable, type Executable } from './executable.js';
import { checkLinkOperands } from './link-sources.js';
import { runnerOptions, type RunnerOptions } from './options.js';
import { optionIn, toolEntry, type OptionSet } from './option-words.js';
import { deniedPathOption, deniedSuffix, namesByPrefix } from './path-options.js';
import { setIdMode, unknownSystemProgram } from './simple-tools.js';
import type { ProcessSpec } from './process.js';
import { CommandRefused, NOT_ALLOWED } from './refusal.js';
import { readOnlyTrees, runnerMode, wrapCommand, type HeldFolder, type SandboxLayout } from './sandbox.js';
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
    (exe.setId ? `${name} runs with the rights of its owner or group (setuid or setgid)` : undefined) ??
    deniedOption(name, args) ??
    deniedProgramArgument(args);
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
  /** Whether it runs in the sandbox, for logs. */
  sandboxed: boolean;
  /**
   * Lets go of the folders held for the start (the working folder, the scope the sandbox binds):
   * call once the process has started. What the command holds while it runs (its quota room, the
   * masks of private files) is let go by `afterExit` when it ends.
   */
  release(): Promise<void>;
  /** The process will not be started after all: lets go of everything. */
  cancel(): Promise<void>;
}

/**
 * Programs that write copies of their sources (each source operand counted, a repeated one as
 * often as it is named: `install --backup=numbered f f f d` makes three files).
 */
const COPIERS = new Set(['cp', 'install']);

/**
 * Options that take disk space a file's size does not show (fallocate's keep-size, and the modes
 * that move or zero ranges, which the file-size limit does not see either): the quota counts sizes,
 * so these are refused, whoever allows the tool.
 */
const QUOTA_BLIND: Readonly<Record<string, OptionSet>> = {
  fallocate: {
    letters: 'npicz',
    long: ['keep-size', 'punch-hole', 'insert-range', 'collapse-range', 'zero-range'],
  },
};

function quotaBlindOption(names: readonly string[], args: readonly string[]): string | undefined {
  for (const name of names) {
    const set = toolEntry(name, (n) => QUOTA_BLIND[n]);
    if (!set) continue;
    for (const arg of args) {
      const option = optionIn(arg, set);
      if (option) return `${name} ${option} takes disk space the quota cannot see`;
    }
  }
  return undefined;
}

/** A refusal for a command while the user's scope is over its quota. */
function overQuota(used: number, limit: number): CommandRefused {
  return new CommandRefused(
    `Command not allowed: your scope is over its quota (${formatBytes(used)} of ${formatBytes(limit)}); free some space first.`,
  );
}

/** Things to let go of, last taken first, once each. */
class Held {
  private readonly steps: Array<() => unknown> = [];
  add(step: () => unknown): void {
    this.steps.push(step);
  }
  async release(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) await step();
  }
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
  const pathOption =
    deniedPathOption(names, args) ??
    deniedSuffix(names, args) ??
    quotaBlindOption(names, args) ??
    setIdMode(names, args);
  if (pathOption) throw new CommandRefused(`Command not allowed: ${pathOption}.`);

  const access = await fileAccessFor(ctx, user);
  checkNotUploaded(ctx, exe, access.scope.real);
  const unknown = opts.unsafeCommands.includes(name) ? undefined : unknownSystemProgram(name, exe.real);
  if (unknown) {
    throw new CommandRefused(
      `Command not allowed: ${unknown}. An administrator can allow it in the unsafeCommands setting.`,
    );
  }
  const mode = await runnerMode(ctx);
  if (mode.refuse) {
    throw new CommandRefused(
      'Command not allowed: this server runs commands only in a sandbox, and none can be had (its log says why).',
    );
  }
  if (!mode.bwrap && access.privatePathsBelow(access.scope.real).length > 0) {
    // Without a sandbox a program sees the server's own files as the server does. Checking its
    // arguments cannot keep it from them: walks, names it builds (backup suffixes, split
    // pieces), a folder moved while it runs, a hard link made to them all got through.
    throw new CommandRefused(
      "Command not allowed: your scope holds the server's own files (its database, trash, uploads or previews), and without the runner's sandbox (bubblewrap) this server runs no command there.",
    );
  }

  const held = new Held();
  try {
    const cwd = await workingFolder(access, virtualDir);
    held.add(() => cwd.close());
    await checkArgumentPaths(access, cwd.virtual, args, {
      noParent: !mode.bwrap,
      noPrograms: !mode.bwrap,
      prefixes: namesByPrefix(names, args),
    });
    const copies = await checkLinkOperands(access, cwd.virtual, names, args);

    // The scope, held from here to the start: the sandbox binds it, its file system has the room.
    let scope = cwd;
    if (cwd.real !== access.scope.real) {
      const opened = await access.open('/', { rules: false });
      held.add(() => opened.close());
      scope = opened;
    }
    if (!scope.node) throw new CommandRefused('The working folder does not exist.');
    // A command may change anything in the scope, and no lock check sees what it does: none runs
    // while another user holds a WebDAV lock in it (the web API answers 423 for the same change).
    try {
      await access.locks.assertWritable(access, scope, { deep: true });
    } catch (err) {
      if (!(err instanceof LockedError)) throw err;
      throw new CommandRefused(
        `Command not allowed: something in your scope is ${err.message}. A command could change what is locked: try again once it is unlocked.`,
      );
    }

    const lent = await access.quota.lendToCommand(access);
    if (lent.over) throw overQuota(lent.over.used, lent.over.limit);
    // What the command holds until it ends. One that ran is counted again before its room is
    // given back; one that never started only gives it back.
    const after = new Held();
    // What is deleted from the scope while the command runs may still be written by it.
    const since = Date.now();
    const done = async (started: boolean) => {
      try {
        if (started) {
          const place = access.rootPathOf(access.scope.real);
          if (place !== undefined) await remeasureTrash(ctx, access, place, since);
          await lent.settle();
        }
      } finally {
        lent.release();
        await after.release();
      }
    };
    try {
      if (lent.room !== undefined && !mode.prlimit) {
        throw new CommandRefused(
          'Command not allowed: your scope has a quota, and this server cannot bound what a command writes (prlimit is missing).',
        );
      }
      const { bavail, bsize } = await statFileSystem(scope.node);
      const free = bavail * bsize;
      const fileSize = Math.min(lent.room ?? Infinity, free);
      const copier = names.find((n) => COPIERS.has(n));
      if (copier && lent.room !== undefined && copies > lent.room) {
        throw new CommandRefused(
          `Command not allowed: ${copier} would copy ${formatBytes(copies)}, and your quota leaves ${formatBytes(lent.room)}.`,
        );
      }
      let layout: SandboxLayout | undefined;
      if (mode.bwrap) {
        layout = await sandboxLayout(ctx, access, scope.node, cwd.real, opts.path, held, after);
      }
      const base: ProcessSpec = {
        executable: exe.path,
        argv0: name,
        args,
        cwd: cwd.node!.path,
        env: { PATH: opts.pathEnv, HOME: access.scope.real, LANG: 'C.UTF-8' },
        timeLimitMs: opts.timeLimitMs,
        outputLimit: opts.outputLimit,
      };
      const spec = wrapCommand(mode, base, { fileSize }, layout);
      if (lent.watch) spec.watch = lent.watch;
      return {
        ...spec,
        words,
        workingFolder: cwd.real,
        sandboxed: layout !== undefined,
        release: () => held.release(),
        afterExit: () => done(true),
        cancel: async () => {
          await held.release();
          await done(false);
        },
      };
    } catch (err) {
      await done(false);
      throw err;
    }
  } catch (err) {
    await held.release();
    throw err;
  }
}

/**
 * What the sandbox shows besides the system (runner/sandbox.ts): the scope, bound from its
 * descriptor; the folders on the way to each private path inside it, held so no command can
 * move them; the program folders outside the served files; masks over every private path in
 * any of those. The masks stay until the command ends (`after`), the descriptors until it starts.
 */
async function sandboxLayout(
  ctx: AppContext,
  access: FileAccess,
  scope: Pinned,
  cwd: string,
  programPath: readonly string[],
  held: Held,
  after: Held,
): Promise<SandboxLayout> {
  const served = access.scope.rootReal;
  const programFolders = programPath.filter((dir) => !isInside(served, dir) && !isInside(scope.real, dir));
  const holders: HeldFolder[] = [];
  for (const p of access.privatePathsBelow(scope.real)) {
    let folder = scope;
    const segments = path.relative(scope.real, p).split('/').slice(0, -1);
    for (const segment of segments) {
      const next = await folder.lookup(segment);
      if (!next) break;
      held.add(() => next.close());
      if (!next.stat.isDirectory()) break;
      folder = next;
      if (!holders.some((h) => h.real === next.real))
        holders.push({ real: next.real, descriptor: next.descriptor });
    }
  }
  let masks;
  try {
    masks = maskPrivatePaths(ctx.config, [
      { path: scope.real, writable: true },
      ...readOnlyTrees({ programFolders }).map((p) => ({ path: p, writable: false })),
    ]);
  } catch (err) {
    ctx.log.error({ err }, 'command runner: the server’s own files cannot be hidden from commands');
    throw new CommandRefused(
      'Command not allowed: the server’s own files in your scope cannot be hidden from commands (its log says why).',
    );
  }
  after.add(() => masks.release());
  return {
    scope: { real: scope.real, descriptor: scope.descriptor },
    holders,
    programFolders,
    masks: masks.masks,
    cwd,
  };
}
