import type { LogFormat, LogLevel } from '../logging.js';

/** Everything the server process is configured with, parsed and validated once (see config/load.ts). */
export interface ServerConfig {
  /** Absolute path of the served root folder. */
  root: string;
  /** Path of the SQLite database file. */
  database: string;
  address: string;
  port: number;
  /** Base URL without a trailing slash; "" when served at the origin's root. */
  baseURL: string;
  /** "stdout", "stderr", "" (discard) or a file path. */
  log: string;
  /** One line per record: "text" for people and fail2ban, "json" for log collectors. */
  logFormat: LogFormat;
  /** Least severe level written. */
  logLevel: LogLevel;
  cert: string;
  key: string;
  socket: string;
  socketPerm: number;
  /** Session token lifetime in seconds. */
  tokenExpirationTime: number;
  disableThumbnails: boolean;
  disablePreviewResize: boolean;
  disableExec: boolean;
  disableTypeDetectionByHeader: boolean;
  followExternalSymlinks: boolean;
  /** Folder of the preview cache; "" means beside the database. */
  cacheDir: string;
  imageProcessors: number;
  /** Addresses whose proxy-auth header is trusted (exact IPs or CIDR ranges). */
  trustedProxies: string[];
  /** Failed guesses allowed per address, and per address and username or link, in one window (auth/rate-limit.ts). */
  loginRateLimit: number;
  loginRateWindowSeconds: number;
  /** Folders the command runner looks commands up in, `:`-separated (only absolute ones count). */
  execPath: string;
  /** Seconds a command or hook may run before its process group is killed. */
  execTimeLimit: number;
  /** Bytes of output (stdout and stderr together) after which a command is killed. */
  execOutputLimit: number;
  /**
   * Where users' commands run (runner/sandbox.ts): `auto` in a bubblewrap sandbox when one can be
   * had, else without one; `bwrap` only in the sandbox (commands are refused without it); `off`
   * never in one. Without a sandbox, walks of folders holding the server's own files are refused.
   */
  execSandbox: ExecSandbox;
  /** Heavy requests (big listings, PROPFIND, search, archives) one user runs at once (heavy-work.ts). */
  heavyPerUser: number;
  /** Heavy requests one user may have waiting beyond `heavyPerUser`; one more is refused with 429. */
  heavyQueue: number;
  /** Resumable uploads one user may have pending at once. */
  uploadsPendingLimit: number;
  /** Bytes the pending resumable uploads of one user may declare together. */
  uploadsPendingBytes: number;
  /** Seconds without a byte after which a pending resumable upload is dropped. */
  uploadsExpiry: number;
  /** Connections open at once, in all (http/connections.ts). */
  maxConnections: number;
  /** Connections open at once from one client address; trusted proxies are not counted. */
  maxConnectionsPerAddress: number;
  /** Seconds a request's headers may take to arrive. */
  headersTimeout: number;
  /** Seconds a connection may sit with nothing moving while it is the client's turn. */
  idleTimeout: number;
  /** Seconds requests in flight may take to finish once SIGTERM or SIGINT asked the server to stop. */
  shutdownGrace: number;
  /**
   * bcrypt cost of the password hashes the server makes. The loader refuses less than
   * `BCRYPT_COST`; the test suite builds its servers with a low one directly.
   */
  bcryptCost: number;
  /** Serve Prometheus metrics (off by default). */
  metrics: boolean;
  /**
   * `host:port` of a separate listener for /metrics, served there without sign-in; "" serves
   * them at /metrics on the main listener, to administrators only.
   */
  metricsAddress: string;
  /** Folder of the built web app (index.html and its assets). */
  webDist: string;
  /** Version string shown to clients. */
  version: string;
}

/** The values of `--execSandbox`. */
export const EXEC_SANDBOX_MODES = ['auto', 'bwrap', 'off'] as const;
export type ExecSandbox = (typeof EXEC_SANDBOX_MODES)[number];
