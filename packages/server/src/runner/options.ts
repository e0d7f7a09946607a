import type { ServerConfig } from '../config/types.js';
import type { StoredSettings } from '../store/settings.js';

/** Largest websocket message (the command line) the server reads. */
export const MAX_COMMAND_MESSAGE = 64 * 1024;

export interface RunnerOptions {
  /** Absolute folders, in order. */
  path: string[];
  /** The PATH given to commands. */
  pathEnv: string;
  timeLimitMs: number;
  outputLimit: number;
  /** Deny-listed commands an administrator allowed anyway (`unsafeCommands` setting). */
  unsafeCommands: string[];
}

/** The runner's options from the server configuration and the global settings. */
export function runnerOptions(config: ServerConfig, settings: StoredSettings): RunnerOptions {
  const folders = config.execPath
    .split(':')
    // A relative PATH entry would be looked up from the working folder, which users fill.
    .filter((dir) => dir.startsWith('/'));
  return {
    path: folders,
    pathEnv: folders.join(':'),
    timeLimitMs: config.execTimeLimit * 1000,
    outputLimit: config.execOutputLimit,
    unsafeCommands: settings.unsafeCommands,
  };
}

/**
 * Why `name` cannot be an entry of the `unsafeCommands` setting, or undefined. Entries are matched
 * exactly against the first word typed, which is always a bare name: anything else would be an
 * entry that never matches, so it is refused rather than saved.
 */
export function unsafeCommandProblem(name: string): string | undefined {
  if (name === '') return 'an entry of unsafeCommands is empty';
  if (/[\s\0]/.test(name)) return `unsafeCommands entry "${name}" must be one command name, without blanks`;
  if (name.includes('/') || name === '.' || name === '..') {
    return `unsafeCommands entry "${name}" must be a bare command name, not a path`;
  }
  return undefined;
}

/** The entries of an `unsafeCommands` value, trimmed and without duplicates; throws on a bad entry. */
export function cleanUnsafeCommands(names: readonly string[], fail: (message: string) => Error): string[] {
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    const problem = unsafeCommandProblem(name);
    if (problem) throw fail(problem);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}
