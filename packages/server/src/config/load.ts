import path from 'node:path';
import { isPostgresUrl } from '../store/sql.js';
import { Command } from 'commander';
import { BCRYPT_COST } from '../auth/passwords.js';
import { defaultWebDist } from '../app.js';
import type { LogFormat, LogLevel } from '../logging.js';
import { defaultConfig, parseDuration } from './defaults.js';
import type { ExecSandbox, ServerConfig } from './types.js';

import { ConfigError } from './config-error.js';
import { parseListenAddress } from './listen-address.js';
import { booleanNames, SERVE_OPTIONS, type OptionValue, type OptionValues } from './options.js';
import { optionsFromServerRecord } from './server-record.js';
import {
  addOptions,
  configFileFor,
  configFileLayer,
  envName,
  envValues,
  flagValues,
  rewriteBooleanFlags,
  type ConfigPlaces,
  type Env,
} from './sources.js';

/**
 * Server configuration from its five layers, highest first: command-line flags, FB_* variables,
 * the config file, the server options saved in the database, the built-in defaults.
 * Every value is checked here once; the rest of the server trusts ServerConfig.
 */

/** Values set on purpose (flag > FB_* variable > config file), before the database and defaults. */
export interface ExplicitOptions {
  values: OptionValues;
  /** Where each value came from, for messages. */
  sources: Record<string, 'flag' | 'env' | 'file'>;
  configFile: string | undefined;
  /** Keys of the config file that set nothing, for the command to print. */
  warnings: string[];
}

export function explicitOptions(flags: OptionValues, env: Env, places: ConfigPlaces): ExplicitOptions {
  const configFile = configFileFor(flags, places);
  const file = configFile ? configFileLayer(configFile) : { values: {}, warnings: [] };
  const layers: ['flag' | 'env' | 'file', OptionValues][] = [
    ['file', file.values],
    ['env', envValues(env)],
    ['flag', flags],
  ];
  const values: OptionValues = {};
  const sources: ExplicitOptions['sources'] = {};
  for (const [source, layer] of layers) {
    for (const [k, v] of Object.entries(layer)) {
      values[k] = v;
      sources[k] = source;
    }
  }
  return { values, sources, configFile, warnings: file.warnings };
}

/** The database a command works on: flag > FB_DATABASE > config file > ./filebrowser.db. */
export function databasePath(explicit: ExplicitOptions, places: ConfigPlaces): string {
  return databaseOf(places, explicit.values.database as string | undefined, './filebrowser.db');
}

/** A SQLite file resolved against the working folder; a PostgreSQL URL as it is. */
function databaseOf(places: ConfigPlaces, value: string | undefined, fallback: string): string {
  if (value && isPostgresUrl(value)) return value;
  return path.resolve(places.cwd, value || fallback);
}

// ---------------------------------------------------------------------------------------------
// Resolution

function checkCombinations(explicit: ExplicitOptions): void {
  const { values, sources } = explicit;
  const label = (name: string) => {
    const source = sources[name];
    return source === 'env'
      ? envName(name)
      : source === 'file'
        ? `"${name}" in the config file`
        : `--${name}`;
  };
  if (values.socket) {
    for (const other of ['address', 'port', 'cert', 'key']) {
      if (values[other] !== undefined && values[other] !== '') {
        throw new ConfigError(`${label('socket')} cannot be combined with ${label(other)}`);
      }
    }
  }
}

/** Applies the database record and the defaults under the explicit values, then checks the result. */
export function resolveServerConfig(
  explicit: ExplicitOptions,
  persisted: Record<string, unknown>,
  places: ConfigPlaces,
): ServerConfig {
  checkCombinations(explicit);
  const saved = optionsFromServerRecord(persisted);
  // A socket given now replaces a saved address/port, and the other way round.
  if (explicit.values.socket) {
    delete saved.address;
    delete saved.port;
  } else if (explicit.values.address !== undefined || explicit.values.port !== undefined) {
    delete saved.socket;
  }
  const v: OptionValues = { ...saved, ...explicit.values };
  const d = defaultConfig();
  const abs = (p: OptionValue | undefined, fallback: string) =>
    path.resolve(places.cwd, (p as string | undefined) || fallback);
  const optionalPath = (p: OptionValue | undefined) => (p ? path.resolve(places.cwd, p as string) : '');

  const config: ServerConfig = {
    ...d,
    root: abs(v.root, '.'),
    database: databaseOf(places, v.database as string | undefined, d.database),
    address: (v.address as string | undefined) ?? d.address,
    port: (v.port as number | undefined) ?? d.port,
    baseURL: normaliseBaseURL((v.baseURL as string | undefined) ?? ''),
    log: (v.log as string | undefined) ?? d.log,
    logFormat: (v.logFormat as LogFormat | undefined) ?? d.logFormat,
    logLevel: (v.logLevel as LogLevel | undefined) ?? d.logLevel,
    cert: optionalPath(v.cert),
    key: optionalPath(v.key),
    socket: optionalPath(v.socket),
    socketPerm: (v.socketPerm as number | undefined) ?? d.socketPerm,
    tokenExpirationTime:
      v.tokenExpirationTime !== undefined
        ? parseDuration(v.tokenExpirationTime as string)!
        : d.tokenExpirationTime,
    disableThumbnails: (v.disableThumbnails as boolean | undefined) ?? d.disableThumbnails,
    disablePreviewResize: (v.disablePreviewResize as boolean | undefined) ?? d.disablePreviewResize,
    disableExec: (v.disableExec as boolean | undefined) ?? d.disableExec,
    disableTypeDetectionByHeader:
      (v.disableTypeDetectionByHeader as boolean | undefined) ?? d.disableTypeDetectionByHeader,
    followExternalSymlinks: (v.followExternalSymlinks as boolean | undefined) ?? d.followExternalSymlinks,
    cacheDir: optionalPath(v.cacheDir),
    imageProcessors: (v.imageProcessors as number | undefined) ?? d.imageProcessors,
    trustedProxies: (v.trustedProxies as string[] | undefined) ?? d.trustedProxies,
    loginRateLimit: (v.loginRateLimit as number | undefined) ?? d.loginRateLimit,
    execPath: (v.execPath as string | undefined) || d.execPath,
    execTimeLimit: (v.execTimeLimit as number | undefined) ?? d.execTimeLimit,
    execOutputLimit: (v.execOutputLimit as number | undefined) ?? d.execOutputLimit,
    execSandbox: (v.execSandbox as ExecSandbox | undefined) ?? d.execSandbox,
    heavyPerUser: (v.heavyPerUser as number | undefined) ?? d.heavyPerUser,
    heavyQueue: (v.heavyQueue as number | undefined) ?? d.heavyQueue,
    uploadsPendingLimit: (v.uploadsPendingLimit as number | undefined) ?? d.uploadsPendingLimit,
    uploadsPendingBytes: (v.uploadsPendingBytes as number | undefined) ?? d.uploadsPendingBytes,
    uploadsExpiry:
      v.uploadsExpiry !== undefined ? parseDuration(v.uploadsExpiry as string)! : d.uploadsExpiry,
    maxConnections: (v.maxConnections as number | undefined) ?? d.maxConnections,
    maxConnectionsPerAddress:
      (v.maxConnectionsPerAddress as number | undefined) ?? d.maxConnectionsPerAddress,
    headersTimeout:
      v.headersTimeout !== undefined ? parseDuration(v.headersTimeout as string)! : d.headersTimeout,
    idleTimeout: v.idleTimeout !== undefined ? parseDuration(v.idleTimeout as string)! : d.idleTimeout,
    shutdownGrace: (v.shutdownGrace as number | undefined) ?? d.shutdownGrace,
    bcryptCost: (v.bcryptCost as number | undefined) ?? d.bcryptCost,
    metrics: (v.metrics as boolean | undefined) ?? d.metrics,
    metricsAddress: ((v.metricsAddress as string | undefined) ?? d.metricsAddress).trim(),
    webDist: v.webDist ? path.resolve(places.cwd, v.webDist as string) : defaultWebDist(),
  };
  if (config.tokenExpirationTime <= 0) {
    throw new ConfigError('tokenExpirationTime must be longer than zero');
  }
  if (config.uploadsExpiry <= 0) {
    throw new ConfigError('uploadsExpiry must be longer than zero');
  }
  for (const name of ['headersTimeout', 'idleTimeout'] as const) {
    if (config[name] < 1) throw new ConfigError(`${name} must be at least 1s`);
  }
  // Only the test suite builds a server with a lower cost, from code: a configured one never may.
  if (config.bcryptCost < BCRYPT_COST) {
    throw new ConfigError(
      `bcryptCost must be from ${BCRYPT_COST} to 15: a lower cost makes stolen hashes cheap to crack`,
    );
  }
  if (config.metricsAddress) parseListenAddress(config.metricsAddress, 'metricsAddress');
  if (!!config.cert !== !!config.key) {
    throw new ConfigError(
      config.cert ? '--cert needs --key (the TLS private key)' : '--key needs --cert (the TLS certificate)',
    );
  }
  return config;
}

/** "/files/" -> "/files", "files" -> "/files", "/" -> "". */
function normaliseBaseURL(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, '');
  if (!trimmed) return '';
  return trimmed.startsWith('/') ? trimmed : '/' + trimmed;
}

/**
 * The configuration of `filebrowser [flags]`: parses `argv` (flags only), reads FB_* variables
 * from `env` and the config file, lays them over `places.persisted` (the server record saved in
 * the database) and the defaults. Throws ConfigError with a one-line message.
 */
export function loadConfig(
  argv: string[],
  env: Env,
  places: ConfigPlaces & { persisted?: Record<string, unknown> },
): ServerConfig {
  const cmd = addOptions(new Command('filebrowser'), SERVE_OPTIONS)
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  try {
    cmd.parse(rewriteBooleanFlags(argv, booleanNames(SERVE_OPTIONS)), { from: 'user' });
  } catch (err) {
    throw new ConfigError((err as Error).message.replace(/^error: /, ''));
  }
  const explicit = explicitOptions(flagValues(cmd, SERVE_OPTIONS), env, places);
  return resolveServerConfig(explicit, places.persisted ?? {}, places);
}
