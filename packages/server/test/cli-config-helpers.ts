import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { runCli, type CliIO } from '../src/cli/index.js';
import { ConfigError } from '../src/config/config-error.js';
import { loadConfig } from '../src/config/load.js';
import type { ConfigPlaces } from '../src/config/sources.js';

/**
 * What the configuration tests share: a temporary working folder with its own $HOME and /etc, and
 * the CLI and loader run in it.
 */

/** A temporary working folder, with its own $HOME and /etc, and a CLI writing into buffers. */
export let dir: string;
export let places: ConfigPlaces;

export async function cli(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env,
    places,
    ownsProcess: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

export const load = (argv: string[], env: Record<string, string> = {}, persisted?: Record<string, unknown>) =>
  loadConfig(argv, env, { ...places, persisted });

export function loadError(argv: string[], env: Record<string, string> = {}): string {
  try {
    load(argv, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
}

/** Gives each test of the file that calls it a fresh working folder, removed after it. */
export function useConfigFolder(): void {
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-cli-config-'));
    fs.mkdirSync(path.join(dir, 'home'));
    fs.mkdirSync(path.join(dir, 'files'));
    places = { cwd: dir, home: path.join(dir, 'home'), systemDir: path.join(dir, 'etc') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
}
