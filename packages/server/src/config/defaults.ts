import { availableParallelism } from 'node:os';
import { LOOPBACK } from '../auth/ip.js';
import { BCRYPT_COST } from '../auth/passwords.js';
import type { ServerConfig } from './types.js';

export const VERSION = '2.63.23-next.0.1.0';

/** Set by build.mjs from git; absent when running from source. */
declare const __FB_COMMIT__: string | undefined;
/** The short commit the program was built from, "(untracked)" when unknown. */
export const COMMIT = typeof __FB_COMMIT__ === 'string' && __FB_COMMIT__ ? __FB_COMMIT__ : '(untracked)';

/** libuv's thread pool size: 4 unless the environment sets it (libuv reads it once, at start). */
export function threadPoolSize(): number {
  const n = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1024) : 4;
}

/**
 * Resizes at once: one per core, at most 4, and two pool threads left for file operations. More
 * than the cores makes no image sooner; each resize holds a libuv pool thread for the whole image
 * (a listing or a download waiting behind it), and keeps about three more libvips threads busy,
 * each with a glibc malloc arena that holds on to its memory after the burst (bench/results/
 * 2026-11-26-thumbnails-memory-thumbmem.md).
 */
export function defaultImageProcessors(): number {
  return Math.max(1, Math.min(4, availableParallelism(), threadPoolSize() - 2));
}

/** Built-in defaults: the last layer under flags, FB_* variables, the config file and the database. */
export function defaultConfig(): ServerConfig {
  return {
    root: process.cwd(),
    database: './filebrowser.db',
    address: '127.0.0.1',
    port: 8080,
    baseURL: '',
    log: 'stdout',
    logFormat: 'text',
    logLevel: 'info',
    cert: '',
    key: '',
    socket: '',
    socketPerm: 0o666,
    tokenExpirationTime: 2 * 3600,
    disableThumbnails: false,
    disablePreviewResize: false,
    disableExec: true,
    disableTypeDetectionByHeader: false,
    followExternalSymlinks: false,
    cacheDir: '',
    imageProcessors: defaultImageProcessors(),
    trustedProxies: [...LOOPBACK],
    loginRateLimit: 10,
    loginRateWindowSeconds: 300,
    execPath: '/usr/local/bin:/usr/bin:/bin',
    execTimeLimit: 60,
    execOutputLimit: 1024 * 1024,
    execSandbox: 'auto',
    heavyPerUser: 1,
    heavyQueue: 32,
    uploadsPendingLimit: 100,
    uploadsPendingBytes: 200 * 1024 ** 3,
    uploadsExpiry: 24 * 3600,
    maxConnections: 4096,
    maxConnectionsPerAddress: 128,
    headersTimeout: 30,
    idleTimeout: 75,
    shutdownGrace: 10,
    bcryptCost: BCRYPT_COST,
    metrics: false,
    metricsAddress: '',
    webDist: '',
    version: VERSION,
  };
}

/** Parses Go duration strings as File Browser's --tokenExpirationTime takes them ("2h", "90m", "1h30m"). */
export function parseDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(h|m|s|ms)/gy;
  let total = 0;
  let matched = 0;
  for (const m of text.trim().matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    matched += m[0].length;
  }
  if (!text.trim() || matched !== text.trim().length) return undefined;
  return Math.floor(total);
}
