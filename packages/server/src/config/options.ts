import { LOG_FORMATS, LOG_LEVELS } from '../logging.js';
import { EXEC_SANDBOX_MODES } from './types.js';

/**
 * The options of the server: each one's name, flags, kind and description, in one table that
 * the command line, FB_* variables, the config file and the saved server record all read.
 */

export type OptionKind =
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
  kind: OptionKind;
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

/** The table by option name. */
export const SPEC_BY_NAME = new Map(SERVE_OPTIONS.map((s) => [s.name, s]));

/** Every boolean flag name of these option lists, for rewriteBooleanFlags. */
export function booleanNames(...lists: OptionSpec[][]): Set<string> {
  return new Set(
    lists
      .flat()
      .filter((s) => s.kind === 'boolean')
      .map((s) => s.name),
  );
}
