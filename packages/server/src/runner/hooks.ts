import path from 'node:path';
import type { AppContext } from '../context.js';
import { AppError, forbidden } from '../errors.js';
import { fileAccessFor, type FileAccess } from '../files/access/access.js';
import type { StoredUser } from '../store/users.js';
import { findExecutable } from './executable.js';
import { runnerOptions, type RunnerOptions } from './options.js';
import { describeResult, startProcess, succeeded, type ProcessResult, type ProcessSpec } from './process.js';
import { splitWords, type Word } from './words.js';
import { inBackground } from '../background.js';

/**
 * Event hooks: the administrator's `before_<event>` / `after_<event>` commands (settings.commands),
 * run with the command runner's process handling. File names never become part of a command line:
 * they are whole arguments (a word that is exactly `$FILE` or `${FILE}`) or environment variables.
 */

export type HookEvent = 'upload' | 'save' | 'delete' | 'copy' | 'rename';
export type HookPhase = 'before' | 'after';

export interface HookTarget {
  /** Absolute real path of the file the operation acts on (the source of a copy or rename). */
  file: string;
  /** Absolute real path of the destination of a copy or rename; the scope folder otherwise. */
  destination?: string;
}

export interface HookReport {
  /** After-hooks that failed: the operation happened, the failure is only reported. */
  warnings: string[];
}

/** The variables of a hook, by name. */
export const HOOK_VARIABLES = ['FILE', 'DESTINATION', 'SCOPE', 'TRIGGER', 'USERNAME'] as const;
type HookVariable = (typeof HOOK_VARIABLES)[number];

/** Lines of a failing hook's output kept for the log. */
const LOG_TAIL_LINES = 20;

/** `$FILE` or `${FILE}` as a whole word, unquoted or double-quoted: the variable's name. */
function variableOf(word: Word): HookVariable | undefined {
  if (word.verbatim) return undefined;
  const m = /^\$(?:([A-Z]+)|\{([A-Z]+)\})$/.exec(word.text);
  const name = m?.[1] ?? m?.[2];
  return (HOOK_VARIABLES as readonly string[]).includes(name ?? '') ? (name as HookVariable) : undefined;
}

/** Splits a hook command and substitutes whole-word variables. Exported for tests. */
export function hookArguments(command: string, vars: Record<HookVariable, string>): string[] {
  return splitWords(command).map((w) => {
    const v = variableOf(w);
    return v ? vars[v] : w.text;
  });
}

interface HookCommand {
  raw: string;
  blocking: boolean;
}

function parseHookList(list: readonly string[] | undefined): HookCommand[] {
  const out: HookCommand[] = [];
  for (const entry of list ?? []) {
    let raw = entry.trim();
    // A trailing `&` runs the hook without waiting for it, as in File Browser.
    const blocking = !raw.endsWith('&');
    if (!blocking) raw = raw.slice(0, -1).trim();
    if (raw) out.push({ raw, blocking });
  }
  return out;
}

/** A hook's program: an absolute path (the administrator's script) or a bare name on the PATH. */
async function executableOf(word: string, opts: RunnerOptions): Promise<string> {
  if (path.isAbsolute(word)) return word;
  if (word.includes('/')) throw new Error(`a relative path cannot name a hook program: ${word}`);
  const exe = await findExecutable(word, opts.path);
  if (!exe) throw new Error(`command not found on the runner's PATH: ${word}`);
  return exe.path;
}

/**
 * The process of one hook. With `settings.shell` set (dangerous, see docs/command-runner.md) the
 * command string is handed to that shell as one argument, unsubstituted: the shell reads the
 * variables from its environment, where a file name is data, never code.
 */
async function hookSpec(
  command: string,
  shell: readonly string[],
  vars: Record<HookVariable, string>,
  home: string,
  opts: RunnerOptions,
): Promise<ProcessSpec> {
  const argv = shell.length > 0 ? [...shell, command] : hookArguments(command, vars);
  const [program, ...args] = argv;
  if (!program) throw new Error('empty hook command');
  return {
    executable: await executableOf(program, opts),
    argv0: program,
    args,
    cwd: home,
    env: { PATH: opts.pathEnv, HOME: home, LANG: 'C.UTF-8', ...vars },
    timeLimitMs: opts.timeLimitMs,
    outputLimit: opts.outputLimit,
  };
}

/**
 * Starts a hook in the user's scope folder, pinned for the start (the child's working folder is
 * the descriptor of the folder that was checked), and waits for it.
 */
async function runOne(
  access: FileAccess,
  spec: ProcessSpec,
): Promise<{ result: ProcessResult; tail: string[] }> {
  const tail: string[] = [];
  const home = await access.open('/', { rules: false });
  let proc;
  try {
    proc = startProcess({ ...spec, cwd: home.node?.path ?? spec.cwd }, (line, stream) => {
      tail.push(`${stream}: ${line}`);
      if (tail.length > LOG_TAIL_LINES) tail.shift();
    });
  } finally {
    await home.close();
  }
  return { result: await proc.done, tail };
}

/**
 * Runs the `${phase}_${event}` hooks of the settings for an operation of `user`, in order. Nothing
 * runs when exec is disabled. A blocking before-hook that fails throws an AppError, so the caller
 * must call this before it changes anything; a failing after-hook is logged and returned as a
 * warning. Hooks ending in `&` are started and not waited for; their failures are only logged.
 */
export async function runHooks(
  ctx: AppContext,
  user: StoredUser,
  event: HookEvent,
  phase: HookPhase,
  target: HookTarget,
): Promise<HookReport> {
  const report: HookReport = { warnings: [] };
  if (ctx.config.disableExec) return report;
  const settings = ctx.store.settings.get();
  const trigger = `${phase}_${event}`;
  const commands = parseHookList(settings.commands[trigger]);
  if (commands.length === 0) return report;

  const opts = runnerOptions(ctx.config, settings);
  const access = await fileAccessFor(ctx, user);
  const scope = access.scope;
  const vars: Record<HookVariable, string> = {
    FILE: target.file,
    DESTINATION: target.destination ?? scope.real,
    SCOPE: user.scope,
    TRIGGER: trigger,
    USERNAME: user.username,
  };

  for (const [index, command] of commands.entries()) {
    const label = `the ${trigger} hook`;
    const logFields = { trigger, hook: index, user: user.username };
    let spec: ProcessSpec;
    try {
      spec = await hookSpec(command.raw, settings.shell, vars, scope.real, opts);
    } catch (err) {
      ctx.log.error({ ...logFields, err }, `${label} cannot run`);
      if (phase === 'before' && command.blocking) {
        throw new AppError('internal', `${label} cannot run: ${(err as Error).message}`);
      }
      report.warnings.push(`${label} could not run`);
      continue;
    }

    if (!command.blocking) {
      const running = runOne(access, spec).then(({ result, tail }) => {
        if (!succeeded(result)) {
          ctx.log.warn(
            { ...logFields, output: tail, err: result.error },
            `${label} failed: ${describeResult(result, spec)}`,
          );
        }
      });
      inBackground(running, (err) => ctx.log.error({ ...logFields, err }, `${label} cannot run`));
      continue;
    }

    const { result, tail } = await runOne(access, spec);
    if (succeeded(result)) continue;
    const what = describeResult(result, spec);
    ctx.log.warn({ ...logFields, output: tail, err: result.error }, `${label} failed: ${what}`);
    if (phase === 'before') {
      // The hook said no (or could not say yes): the operation must not happen.
      throw result.outcome === 'exited'
        ? forbidden(`${label} refused the operation (${what})`)
        : new AppError('internal', `${label} failed (${what})`);
    }
    report.warnings.push(`${label} failed (${what})`);
  }
  return report;
}
