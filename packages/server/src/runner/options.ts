import type { ServerConfig } from '../config/types.js';
import type { StoredSettings } from '../store/settings.js';

/** Server options of the command runner (flags `--execPath`, `--execTimeLimit`, `--execOutputLimit`). */
export interface RunnerConfig {
  /** Folders searched for commands, `:`-separated; only absolute folders are used. */
  execPath: string;
  /** Seconds a command or hook may run before its whole process group is killed. */
  execTimeLimit: number;
  /** Bytes of output (stdout and stderr together) after which the command is killed. */
  execOutputLimit: number;
}

export const RUNNER_DEFAULTS: RunnerConfig = {
  execPath: '/usr/local/bin:/usr/bin:/bin',
  execTimeLimit: 60,
  execOutputLimit: 1024 * 1024,
};

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

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * The runner's options from the server configuration and the global settings. The options are read
 * defensively so that a configuration without them (older config files, tests) gets the defaults.
 */
export function runnerOptions(config: ServerConfig, settings: StoredSettings): RunnerOptions {
  const c = config as ServerConfig & Partial<RunnerConfig>;
  const folders = (typeof c.execPath === 'string' && c.execPath ? c.execPath : RUNNER_DEFAULTS.execPath)
    .split(':')
    // A relative PATH entry would be looked up from the working folder, which users fill.
    .filter((dir) => dir.startsWith('/'));
  const unsafe = (settings as StoredSettings & { unsafeCommands?: unknown }).unsafeCommands;
  return {
    path: folders,
    pathEnv: folders.join(':'),
    timeLimitMs: positive(c.execTimeLimit, RUNNER_DEFAULTS.execTimeLimit) * 1000,
    outputLimit: positive(c.execOutputLimit, RUNNER_DEFAULTS.execOutputLimit),
    unsafeCommands: Array.isArray(unsafe) ? unsafe.filter((u): u is string => typeof u === 'string') : [],
  };
}
