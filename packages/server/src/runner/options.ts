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
  const unsafe = (settings as StoredSettings & { unsafeCommands?: unknown }).unsafeCommands;
  return {
    path: folders,
    pathEnv: folders.join(':'),
    timeLimitMs: config.execTimeLimit * 1000,
    outputLimit: config.execOutputLimit,
    unsafeCommands: Array.isArray(unsafe) ? unsafe.filter((u): u is string => typeof u === 'string') : [],
  };
}
