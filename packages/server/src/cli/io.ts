import os from 'node:os';
import path from 'node:path';
import type { ConfigPlaces, Env } from '../config/sources.js';
import type { Logger } from '../context.js';

/**
 * What a command may touch of the outside world. main.ts passes the real process; tests pass
 * buffers and temporary folders, so commands never read process.env or process.cwd() themselves.
 */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: Env;
  places: ConfigPlaces;
  /** Serving installs SIGINT/SIGTERM handlers only when it owns the process. */
  ownsProcess: boolean;
}

/** A mistake in how a command was called or what it was asked to do: one line, exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

export function processIO(): CliIO {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
    places: { cwd: process.cwd(), home: os.homedir() },
    ownsProcess: true,
  };
}

/** Service warnings of CLI commands go to stderr as plain lines. */
export function consoleLogger(io: CliIO): Logger {
  const write =
    (level: string) =>
    (a: string | object, msg?: string): void => {
      const text = typeof a === 'string' ? a : (msg ?? JSON.stringify(a));
      io.err(`${level}: ${text}\n`);
    };
  return { info: () => {}, warn: write('warning'), error: write('error') };
}

/** A path typed on the command line, relative to the command's working folder. */
export function resolvePath(io: CliIO, file: string): string {
  return path.resolve(io.places.cwd, file);
}
