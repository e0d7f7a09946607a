import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { Command, Option } from 'commander';
import type * as Yaml from 'yaml';
import { BCRYPT_COST, looksLikeBcryptHash } from '../auth/passwords.js';
import { defaultWebDist } from '../app.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../logging.js';
import { defaultConfig, parseDuration } from './defaults.js';
import { EXEC_SANDBOX_MODES, type ExecSandbox, type ServerConfig } from './types.js';

/**
 * Server configuration from its five layers, highest first: command-line flags, FB_* variables,
 * the config file, the server options saved in the database, the built-in defaults.
 * Every value is checked here once; the rest of the server trusts ServerConfig.
 */

export type Env = Record<string, string | undefined>;

/** Where relative paths and the config file are looked up. */
export interface ConfigPlaces {
  cwd: string;
  home: string;
  /** Last folder searched for `.filebrowser.*` (File Browser's /etc/filebrowser/). */
  systemDir?: string;
}

import { ConfigError } from './config-error.js';
import { parseListenAddress } from './listen-address.js';

export { ConfigError, parseListenAddress };

type Kind =
  | 'string'
  | 'path'
  | 'boolean'
  | 'port'
  | 'duration'
  /** A whole number >= 1. */
  | 'count'
  /** A whole number >= 0 (up to `max`). */
  | 'uint'
  | 'mode'
  /** Comma-separated words. */
  | 'list'
  /** Comma-separated IP addresses or CIDR ranges. */
  | 'addresses'
  | 'hash';
export type OptionValue = string | number | boolean | string[];
export type OptionValues = Record<string, OptionValue>;

export interface OptionSpec {
  name: string;
  short?: string;
  kind: Kind;
  description: string;
  /** Read from FB_* variables and the config file (all but --config). */
  layered?: boolean;
  hidden?: boolean;
  /** Allowed values, for string options. */
  choices?: readonly string[];
  /** Largest value, for uint options. */
  max?: number;
}

/** The options of `filebrowser` (serving). Names are File Browser's flag names. */
export const SERVE_OPTIONS: OptionSpec[] = [
  { name: 'config', short: 'c', kind: 'path', description: 'config file path', layered: false },
  { name: 'database', short: 'd', kind: 'path', description: 'database path (default "./filebrowser.db")' },
  { name: 'address', short: 'a', kind: 'string', description: 'address to listen on (default "127.0.0.1")' },
  { name: 'port', short: 'p', kind: 'port', description: 'port to listen on (default 8080)' },
  { name: 'root', short: 'r', kind: 'path', description: 'root folder to serve (default ".")' },
  { name: 'baseURL', short: 'b', kind: 'string', description: 'base URL when served under a path prefix' },
  { name: 'log', short: 'l', kind: 'string', description: 'log output: stdout, stderr, "" or a file' },
  {
    name: 'logFormat',
    kind: 'string',
    choices: LOG_FORMATS,
    description: 'log lines as "text" or "json" (default "text")',
  },
  {
    name: 'logLevel',
    kind: 'string',
    choices: LOG_LEVELS,
    description: 'least severe level logged: error, warn, info or debug (default "info")',
  },
  { name: 'cert', short: 't', kind: 'path', description: 'TLS certificate file' },
  { name: 'key', short: 'k', kind: 'path', description: 'TLS key file' },
  { name: 'socket', kind: 'path', description: 'unix socket to listen on (instead of address and port)' },
  { name: 'socketPerm', kind: 'mode', description: 'unix socket file mode (default 0666)' },
  { name: 'tokenExpirationTime', kind: 'duration', description: 'session token lifetime (default "2h")' },
  { name: 'disableThumbnails', kind: 'boolean', description: 'disable image thumbnails' },
  { name: 'disablePreviewResize', kind: 'boolean', description: 'disable resizing of image previews' },
  {
    name: 'disableExec',
    kind: 'boolean',
    description: 'disable the command runner and hooks (default true)',
  },
  {
    name: 'disableTypeDetectionByHeader',
    kind: 'boolean',
    description: 'detect file types by extension only',
  },
  {
    name: 'disableImageResolutionCalc',
    kind: 'boolean',
    description: 'accepted for compatibility; has no effect',
  },
  { name: 'followExternalSymlinks', kind: 'boolean', description: 'follow symlinks that leave the root' },
  { name: 'cacheDir', kind: 'path', description: 'folder of the preview cache' },
  {
    name: 'imageProcessors',
    kind: 'count',
    description: 'concurrent image resizes (default: the cores, at most 4 and 2 fewer than the thread pool)',
  },
  { name: 'noauth', kind: 'boolean', description: 'first start only: no authentication' },
  { name: 'username', kind: 'string', description: 'first start only: administrator name (default "admin")' },
  {
    name: 'password',
    kind: 'hash',
    description: 'first start only: administrator password as a bcrypt hash',
  },
  {
    name: 'trustedProxies',
    kind: 'addresses',
    description: 'addresses or CIDR ranges trusted for proxy headers (default loopback)',
  },
  {
    name: 'loginRateLimit',
    kind: 'count',
    description: 'failed logins (and share passwords) allowed per address in 5 min',
  },
  {
    name: 'execPath',
    kind: 'string',
    description: 'folders the command runner looks commands up in (default "/usr/local/bin:/usr/bin:/bin")',
  },
  { name: 'execTimeLimit', kind: 'count', description: 'seconds a command or hook may run (default 60)' },
  {
    name: 'execOutputLimit',
    kind: 'count',
    description: 'bytes of output after which a command is killed (default 1048576)',
  },
  {
    name: 'execSandbox',
    kind: 'string',
    choices: EXEC_SANDBOX_MODES,
    description:
      'run commands in a bubblewrap sandbox: "auto" when one can be had, "bwrap" always (or refuse them), "off" never (default "auto")',
  },
  {
    name: 'heavyPerUser',
    kind: 'count',
    description:
      'heavy requests (big listings, PROPFIND, search, archives) one user runs at once (default 1)',
  },
  {
    name: 'heavyQueue',
    kind: 'uint',
    description: 'heavy requests one user may have waiting beyond those; past it, 429 (default 32)',
  },
  {
    name: 'uploadsPendingLimit',
    kind: 'count',
    description: 'resumable uploads one user may have pending (default 100)',
  },
  {
    name: 'uploadsPendingBytes',
    kind: 'count',
    description: 'bytes the pending uploads of one user may declare together (default 214748364800)',
  },
  {
    name: 'uploadsExpiry',
    kind: 'duration',
    description: 'time without a byte after which a pending upload is dropped (default "24h")',
  },
  {
    name: 'maxConnections',
    kind: 'count',
    description: 'connections open at once, in all (default 4096)',
  },
  {
    name: 'maxConnectionsPerAddress',
    kind: 'count',
    description:
      'connections open at once from one client address; trusted proxies are not counted (default 128)',
  },
  {
    name: 'headersTimeout',
    kind: 'duration',
    description: 'time a request\'s headers may take to arrive (default "30s")',
  },
  {
    name: 'idleTimeout',
    kind: 'duration',
    description: 'time a connection may wait for its client with nothing moving (default "75s")',
  },
  {
    name: 'bcryptCost',
    kind: 'uint',
    max: 15,
    description: 'bcrypt cost of stored password hashes, 10 to 15 (default 10); each step doubles the work',
  },
  {
    name: 'shutdownGrace',
    kind: 'uint',
    max: 86_400,
    description: 'seconds running requests may take to finish on SIGTERM (default 10)',
  },
  { name: 'metrics', kind: 'boolean', description: 'serve Prometheus metrics at /metrics (admins only)' },
  {
    name: 'metricsAddress',
    kind: 'string',
    description: 'host:port of a separate listener for /metrics, without sign-in (e.g. 127.0.0.1:9180)',
  },
  { name: 'webDist', kind: 'path', description: 'folder of the built web app', hidden: true },
];

const SPEC_BY_NAME = new Map(SERVE_OPTIONS.map((s) => [s.name, s]));

// ---------------------------------------------------------------------------------------------
// Parsing single values (shared with the CLI's config and user flags)

const TRUE_WORDS = new Set(['1', 't', 'true', 'y', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

export function parseBoolean(raw: unknown, label: string): boolean {
  if (typeof raw === 'boolean') return raw;
  const word = String(raw).trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigError(`invalid value "${String(raw)}" for ${label}: expected true or false`);
}

export function parseInteger(
  raw: unknown,
  label: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = typeof raw === 'number' ? String(raw) : String(raw).trim();
  const n = /^-?\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`invalid value "${String(raw)}" for ${label}: expected a whole number ${range}`);
  }
  return n;
}

/** File modes are written in octal ("0640", "640", "0o640"); a JSON number is taken as the mode itself. */
export function parseFileMode(raw: unknown, label: string): number {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= 0o7777) return raw;
  const text = String(raw).trim().replace(/^0o/i, '');
  if (!/^[0-7]{1,5}$/.test(text) || parseInt(text, 8) > 0o7777) {
    throw new ConfigError(
      `invalid value "${String(raw)}" for ${label}: expected an octal file mode like 0640`,
    );
  }
  return parseInt(text, 8);
}

export function parseList(raw: unknown): string[] {
  const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
  return items.map((s) => s.trim()).filter(Boolean);
}

export function formatFileMode(mode: number): string {
  return '0' + mode.toString(8).padStart(3, '0');
}

/** Seconds as a Go duration string ("2h", "1h30m", "45s"), the form File Browser stores. */
export function formatDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

export function parseValue(spec: OptionSpec, raw: unknown, label: string): OptionValue {
  switch (spec.kind) {
    case 'string':
    case 'path': {
      if (raw !== null && typeof raw === 'object') throw new ConfigError(`invalid value for ${label}`);
      const text = String(raw ?? '');
      if (spec.choices && !spec.choices.includes(text)) {
        throw new ConfigError(
          `invalid value "${text}" for ${label}: expected one of ${spec.choices.map((c) => `"${c}"`).join(', ')}`,
        );
      }
      return text;
    }
    case 'boolean':
      return parseBoolean(raw, label);
    case 'port':
      return parseInteger(raw, label, 1, 65535);
    case 'count':
      return parseInteger(raw, label, 1);
    case 'uint':
      return parseInteger(raw, label, 0, spec.max);
    case 'list':
      return parseList(raw);
    case 'mode':
      return parseFileMode(raw, label);
    case 'duration': {
      const text = String(raw).trim();
      if (parseDuration(text) === undefined) {
        throw new ConfigError(
          `invalid value "${text}" for ${label}: expected a duration like 2h, 90m or 1h30m`,
        );
      }
      return text;
    }
    case 'addresses': {
      const list = parseList(raw);
      for (const entry of list) {
        const [ip, bits, extra] = entry.split('/');
        const family = net.isIP(ip ?? '');
        const maxBits = family === 6 ? 128 : 32;
        const badBits = bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits);
        if (!family || badBits || extra !== undefined) {
          throw new ConfigError(
            `invalid value "${entry}" for ${label}: expected an IP address or CIDR range`,
          );
        }
      }
      return list;
    }
    case 'hash': {
      const text = String(raw ?? '');
      if (text && !looksLikeBcryptHash(text)) {
        throw new ConfigError(
          `invalid value for ${label}: expected a bcrypt hash (make one with "filebrowser hash <password>")`,
        );
      }
      return text;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Command-line flags through commander

/** "tokenExpirationTime" -> "TOKEN_EXPIRATION_TIME", "baseURL" -> "BASE_URL". */
export function envName(optionName: string): string {
  return (
    'FB_' +
    optionName
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
      .replace(/\./g, '_')
      .toUpperCase()
  );
}

/** Adds options to a command. Booleans get a hidden `--no-x` so `--x=false` can be rewritten to it. */
export function addOptions(cmd: Command, specs: OptionSpec[]): Command {
  for (const spec of specs) {
    const flags = `${spec.short ? `-${spec.short}, ` : ''}--${spec.name}`;
    if (spec.kind === 'boolean') {
      cmd.addOption(new Option(flags, spec.description).hideHelp(!!spec.hidden));
      cmd.addOption(new Option(`--no-${spec.name}`).hideHelp());
    } else {
      cmd.addOption(new Option(`${flags} <value>`, spec.description).hideHelp(!!spec.hidden));
    }
  }
  return cmd;
}

/**
 * Rewrites `--flag=true|false` of boolean flags into `--flag` / `--no-flag`: commander's booleans
 * take no value, while File Browser's (pflag) accept one after "=".
 */
export function rewriteBooleanFlags(argv: string[], booleanNames: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    if (m && booleanNames.has(m[1]!)) {
      out.push(parseBoolean(m[2], `--${m[1]}`) ? `--${m[1]}` : `--no-${m[1]}`);
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** The options a user typed on the command line, parsed and checked. */
export function flagValues(cmd: Command, specs: OptionSpec[]): OptionValues {
  const opts = cmd.opts<Record<string, unknown>>();
  const values: OptionValues = {};
  for (const spec of specs) {
    if (cmd.getOptionValueSource(spec.name) !== 'cli') continue;
    const flag = `--${spec.name}`;
    values[spec.name] = parseValue(spec, opts[spec.name], flag);
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// Environment and config file

/** FB_* values. The name without underscores (FB_BASEURL) is accepted too, as File Browser did. */
export function envValues(env: Env, specs: OptionSpec[] = SERVE_OPTIONS): OptionValues {
  const values: OptionValues = {};
  for (const spec of specs) {
    if (spec.layered === false) continue;
    const name = envName(spec.name);
    const raw = env[name] ?? env[name.slice(0, 3) + name.slice(3).replaceAll('_', '')];
    if (raw === undefined) continue;
    values[spec.name] = parseValue(spec, raw, `${name}`);
  }
  return values;
}

const CONFIG_NAMES = ['.filebrowser.json', '.filebrowser.yaml', '.filebrowser.yml'];

export function findConfigFile(places: ConfigPlaces): string | undefined {
  const dirs = [places.cwd, places.home, places.systemDir ?? '/etc/filebrowser'].filter(Boolean);
  for (const dir of dirs) {
    for (const name of CONFIG_NAMES) {
      const file = path.join(dir, name);
      if (fs.existsSync(file)) return file;
    }
  }
  return undefined;
}

/** The YAML parser, loaded only when a YAML file is read (most servers have none: 7 MB less at rest). */
export function yaml(): typeof Yaml {
  return createRequire(import.meta.url)('yaml') as typeof Yaml;
}

/** Reads a JSON or YAML document (by extension; YAML is a superset of JSON for anything else). */
export function readDataFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return /\.json$/i.test(file) ? JSON.parse(text) : yaml().parse(text, { customTags: ['binary'] });
  } catch (err) {
    const first = (err as Error).message.split('\n')[0];
    throw new ConfigError(`cannot parse ${file}: ${first}`);
  }
}

/** Config-file values; keys are flag names, matched without regard to case as viper did. */
export function configFileValues(file: string, specs: OptionSpec[] = SERVE_OPTIONS): OptionValues {
  return configFileLayer(file, specs).values;
}

/** A config file's values, and a warning for each key that names no option it can set. */
export function configFileLayer(
  file: string,
  specs: OptionSpec[] = SERVE_OPTIONS,
): { values: OptionValues; warnings: string[] } {
  if (/\.toml$/i.test(file))
    throw new ConfigError(`config file ${file}: TOML is not supported, use JSON or YAML`);
  const doc = readDataFile(file);
  if (doc === null || doc === undefined) return { values: {}, warnings: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${file} must hold an object of option names and values`);
  }
  const byLowerKey = new Map(Object.entries(doc).map(([k, v]) => [k.toLowerCase(), v]));
  const values: OptionValues = {};
  for (const spec of specs) {
    if (spec.layered === false) continue;
    const raw = byLowerKey.get(spec.name.toLowerCase());
    if (raw === undefined || raw === null) continue;
    values[spec.name] = parseValue(spec, raw, `"${spec.name}" in ${file}`);
  }
  return { values, warnings: unknownKeyWarnings(file, Object.keys(doc), specs) };
}

/** A key nothing reads would silently change nothing: `prot: 80` leaves the port at 8080. */
function unknownKeyWarnings(file: string, keys: string[], specs: OptionSpec[]): string[] {
  const layered = specs.filter((s) => s.layered !== false && !s.hidden).map((s) => s.name);
  const known = new Set(specs.filter((s) => s.layered !== false).map((s) => s.name.toLowerCase()));
  const flagOnly = new Set(specs.filter((s) => s.layered === false).map((s) => s.name.toLowerCase()));
  return keys.flatMap((key) => {
    const lower = key.toLowerCase();
    if (known.has(lower)) return [];
    if (flagOnly.has(lower)) return [`"${key}" in ${file} is ignored: it is a command-line flag only`];
    const near = nearestName(lower, layered);
    return [`unknown key "${key}" in ${file} is ignored${near ? ` (did you mean "${near}"?)` : ''}`];
  });
}

/** The option name closest to `typed` (case-insensitive edit distance), when close enough to be a typo. */
function nearestName(typed: string, names: string[]): string | undefined {
  const limit = typed.length <= 4 ? 1 : Math.floor(typed.length / 3);
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance where swapping two neighbours counts as one edit (`prot` → `port`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The config file a run uses: `--config` when given (it must exist), else the first one found. */
export function configFileFor(flags: OptionValues, places: ConfigPlaces): string | undefined {
  const given = flags.config as string | undefined;
  if (given) {
    const file = path.resolve(places.cwd, given);
    if (!fs.existsSync(file)) throw new ConfigError(`config file ${given} does not exist`);
    return file;
  }
  return findConfigFile(places);
}

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
  return path.resolve(places.cwd, (explicit.values.database as string | undefined) || './filebrowser.db');
}

// ---------------------------------------------------------------------------------------------
// The server record saved in the database (File Browser's `server` object, plus our options)

/** [option name, key of the saved record, saved as the negation]. */
const RECORD_FIELDS: [string, string, boolean][] = [
  ['root', 'root', false],
  ['baseURL', 'baseURL', false],
  ['socket', 'socket', false],
  ['key', 'tlsKey', false],
  ['cert', 'tlsCert', false],
  ['port', 'port', false],
  ['address', 'address', false],
  ['log', 'log', false],
  ['logFormat', 'logFormat', false],
  ['logLevel', 'logLevel', false],
  ['disableThumbnails', 'enableThumbnails', true],
  ['disablePreviewResize', 'resizePreview', true],
  ['disableExec', 'enableExec', true],
  ['disableTypeDetectionByHeader', 'typeDetectionByHeader', true],
  ['disableImageResolutionCalc', 'imageResolutionCalculation', true],
  ['tokenExpirationTime', 'tokenExpirationTime', false],
  ['followExternalSymlinks', 'followExternalSymlinks', false],
  ['cacheDir', 'cacheDir', false],
  ['imageProcessors', 'imageProcessors', false],
  ['socketPerm', 'socketPerm', false],
  ['trustedProxies', 'trustedProxies', false],
  ['loginRateLimit', 'loginRateLimit', false],
  ['execPath', 'execPath', false],
  ['execTimeLimit', 'execTimeLimit', false],
  ['execOutputLimit', 'execOutputLimit', false],
  ['execSandbox', 'execSandbox', false],
  ['heavyPerUser', 'heavyPerUser', false],
  ['heavyQueue', 'heavyQueue', false],
  ['uploadsPendingLimit', 'uploadsPendingLimit', false],
  ['uploadsPendingBytes', 'uploadsPendingBytes', false],
  ['uploadsExpiry', 'uploadsExpiry', false],
  ['maxConnections', 'maxConnections', false],
  ['maxConnectionsPerAddress', 'maxConnectionsPerAddress', false],
  ['headersTimeout', 'headersTimeout', false],
  ['idleTimeout', 'idleTimeout', false],
  ['shutdownGrace', 'shutdownGrace', false],
  ['bcryptCost', 'bcryptCost', false],
  ['metrics', 'metrics', false],
  ['metricsAddress', 'metricsAddress', false],
];

/** Keys of File Browser's exported `server` object, in its order, then ours. */
export const SERVER_RECORD_KEYS = [...RECORD_FIELDS.map(([, key]) => key), 'authHook'];

/** Options as the saved server record spells them (for `config init|set`). */
export function serverRecordFromOptions(values: OptionValues): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [option, key, negated] of RECORD_FIELDS) {
    const v = values[option];
    if (v === undefined) continue;
    if (option === 'port')
      record[key] = String(v); // File Browser keeps the port as a string
    else record[key] = negated ? !v : v;
  }
  return record;
}

/** The full record for a resolved configuration (quick setup and `config init`). */
export function serverRecordFromConfig(
  config: ServerConfig,
  extra: OptionValues = {},
): Record<string, unknown> {
  return {
    ...serverRecordFromOptions({
      root: config.root,
      baseURL: config.baseURL,
      socket: config.socket,
      key: config.key,
      cert: config.cert,
      port: config.port,
      address: config.address,
      log: config.log,
      logFormat: config.logFormat,
      logLevel: config.logLevel,
      disableThumbnails: config.disableThumbnails,
      disablePreviewResize: config.disablePreviewResize,
      disableExec: config.disableExec,
      disableTypeDetectionByHeader: config.disableTypeDetectionByHeader,
      disableImageResolutionCalc: false,
      tokenExpirationTime: formatDuration(config.tokenExpirationTime),
      followExternalSymlinks: config.followExternalSymlinks,
      cacheDir: config.cacheDir,
      imageProcessors: config.imageProcessors,
      socketPerm: config.socketPerm,
      trustedProxies: config.trustedProxies,
      loginRateLimit: config.loginRateLimit,
      execPath: config.execPath,
      execTimeLimit: config.execTimeLimit,
      execOutputLimit: config.execOutputLimit,
      execSandbox: config.execSandbox,
      heavyPerUser: config.heavyPerUser,
      heavyQueue: config.heavyQueue,
      uploadsPendingLimit: config.uploadsPendingLimit,
      uploadsPendingBytes: config.uploadsPendingBytes,
      uploadsExpiry: formatDuration(config.uploadsExpiry),
      maxConnections: config.maxConnections,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      headersTimeout: formatDuration(config.headersTimeout),
      idleTimeout: formatDuration(config.idleTimeout),
      shutdownGrace: config.shutdownGrace,
      bcryptCost: config.bcryptCost,
      metrics: config.metrics,
      metricsAddress: config.metricsAddress,
      ...extra,
    }),
    authHook: '',
  };
}

/**
 * Options from the saved record. Keys match without regard to case (File Browser's YAML exports
 * lower-case them); a value that no longer parses falls back to the default, as File Browser did
 * for an unparsable tokenExpirationTime.
 */
export function optionsFromServerRecord(record: Record<string, unknown>): OptionValues {
  const byLowerKey = new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
  const values: OptionValues = {};
  for (const [option, key, negated] of RECORD_FIELDS) {
    const raw = byLowerKey.get(key.toLowerCase());
    // "" is a real value for strings (log "" discards, address "" listens everywhere).
    if (raw === undefined || raw === null) continue;
    try {
      const v = parseValue(SPEC_BY_NAME.get(option)!, raw, key);
      values[option] = negated ? !v : v;
    } catch {
      // An old or hand-edited value: the layers below take over.
    }
  }
  return values;
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
    database: abs(v.database, d.database),
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

/** Every boolean flag name of these option lists, for rewriteBooleanFlags. */
export function booleanNames(...lists: OptionSpec[][]): Set<string> {
  return new Set(
    lists
      .flat()
      .filter((s) => s.kind === 'boolean')
      .map((s) => s.name),
  );
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
