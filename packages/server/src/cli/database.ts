import type { Command } from 'commander';
import { databasePath, explicitOptions, resolveServerConfig, type ExplicitOptions } from '../config/load.js';
import { SERVE_OPTIONS, type OptionSpec, type OptionValues } from '../config/options.js';
import { addOptions } from '../config/sources.js';
import type { AppContext } from '../context.js';
import { isNewStore, openStore, type Store } from '../store/index.js';
import { CliError, consoleLogger, type CliIO } from './io.js';

/** -c and -d, which every command takes, as File Browser's did. */
export const STORE_OPTIONS: OptionSpec[] = SERVE_OPTIONS.filter(
  (s) => s.name === 'config' || s.name === 'database',
);

export function addStoreOptions(cmd: Command): Command {
  return addOptions(cmd, STORE_OPTIONS);
}

/**
 * -c/-d typed on this command or before the sub-command name (`filebrowser -d x users ls`);
 * the one closest to the command wins.
 */
function storeFlags(cmd: Command): OptionValues {
  const values: OptionValues = {};
  for (let c: Command | null = cmd; c; c = c.parent) {
    for (const name of ['config', 'database']) {
      if (values[name] === undefined && c.getOptionValueSource(name) === 'cli') {
        values[name] = String(c.opts<Record<string, unknown>>()[name]);
      }
    }
  }
  return values;
}

export interface OpenedStore {
  store: Store;
  database: string;
  explicit: ExplicitOptions;
  /** The database did not exist (or was empty) before this command opened it. */
  created: boolean;
}

/** The database a command names (-d, -c, FB_DATABASE, or the default), not opened. */
export function commandDatabase(cmd: Command, io: CliIO): { explicit: ExplicitOptions; database: string } {
  const explicit = explicitOptions(storeFlags(cmd), io.env, io.places);
  for (const warning of explicit.warnings) io.err(`warning: ${warning}\n`);
  return { explicit, database: databasePath(explicit, io.places) };
}

/** Opens the database a command names. Most commands refuse to create one by accident. */
export async function openCommandStore(
  cmd: Command,
  io: CliIO,
  opts: { mayCreate?: boolean } = {},
): Promise<OpenedStore> {
  const { explicit, database } = commandDatabase(cmd, io);
  const created = await isNewStore(database);
  if (created && !opts.mayCreate) {
    throw new CliError(
      `database ${database} does not exist: start the server once, or run "filebrowser config init" or "config import"`,
    );
  }
  return { store: await openStore(database), database, explicit, created };
}

/** Runs `fn` on the command's database and closes it afterwards, also on errors. */
export async function withStore<T>(
  cmd: Command,
  io: CliIO,
  fn: (opened: OpenedStore) => T | Promise<T>,
  opts: { mayCreate?: boolean } = {},
): Promise<T> {
  const opened = await openCommandStore(cmd, io, opts);
  try {
    return await fn(opened);
  } finally {
    await opened.store.close();
  }
}

/** The services' context without an HTTP server: for account rules shared with the API. */
export function commandContext(opened: OpenedStore, io: CliIO): AppContext {
  const config = resolveServerConfig(opened.explicit, opened.store.settings.getServer(), io.places);
  return { config, store: opened.store, log: consoleLogger(io) } as AppContext;
}
