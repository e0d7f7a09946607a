// Starts the built server on 127.0.0.1 with a fresh database, logs in, and watches its memory.
import { hash } from '@node-rs/bcrypt';
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild, track } from './cleanup.mjs';
import { watchCpu } from './cpu.mjs';
import { request } from './http.mjs';
import { freePort } from './proc.mjs';

/**
 * @typedef {object} Server
 * @property {string} base e.g. http://127.0.0.1:41234
 * @property {string} token JWT for the X-Auth header
 * @property {string} password the administrator's
 * @property {number} pid
 * @property {string} cacheDir the preview cache folder (cleared by the thumbnail row)
 * @property {() => Record<string, string>} auth headers with the token
 * @property {() => Record<string, string>} basic headers with Basic credentials (WebDAV)
 * @property {() => { peakKiB: number | null, sampledMaxKiB: number | null }} memory
 * @property {() => Promise<void>} stop
 */

/**
 * Reads a "VmXXX:   1234 kB" field of /proc/<pid>/status.
 * @param {number} pid
 * @param {string} field
 * @returns {number | null} KiB
 */
export function procStatusKiB(pid, field) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The process settings the build at `entry` is started with by its launchers (`bin/filebrowser`,
 * `npm start`): its own `process-settings.js`, beside `main.js`. A build from before they
 * existed has none and runs as it did then.
 * @param {string} entry
 * @returns {Promise<((env: NodeJS.ProcessEnv, nodeArgs: string[]) => { env: Record<string, string>, nodeArgs: string[] }) | null>}
 */
async function launchOf(entry) {
  const file = path.join(path.dirname(path.resolve(entry)), 'process-settings.js');
  if (!fs.existsSync(file)) return null;
  const { serverLaunch } = await import(pathToFileURL(file).href);
  return serverLaunch;
}

/**
 * @param {{ entry: string, workDir: string, dataRoot: string, log: (msg: string) => void,
 *   nodeArgs?: string[], env?: Record<string, string>, database?: string, password?: string }} options
 *   `password`: the administrator's (a second instance on the same database is given the first's);
 *   `nodeArgs`: flags for node itself
 *   (e.g. --cpu-prof, which NODE_OPTIONS refuses); `env`: variables added to the server's
 *   environment (FB_NATIVE=off); they and BENCH_SERVER_NODE_ARGS win over the build's own settings
 * @returns {Promise<Server>}
 */
export async function startServer({
  entry,
  workDir,
  dataRoot,
  log,
  nodeArgs = [],
  env = {},
  database,
  password = crypto.randomBytes(18).toString('base64url'),
}) {
  const passwordHash = await hash(password, { cost: 10, version: '2a' });
  const port = await freePort();
  const cacheDir = path.join(workDir, 'cache');
  // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": node flags for profiling the server under the bench.
  const envArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  // Started as users start it: with the settings its launchers give it (user-given ones win).
  const serverLaunch = await launchOf(entry);
  const launch = serverLaunch
    ? serverLaunch({ ...process.env, ...env }, [...envArgs, ...nodeArgs])
    : { env: { ...process.env, ...env }, nodeArgs: [...envArgs, ...nodeArgs] };
  const args = [
    ...launch.nodeArgs,
    entry,
    '-d', database ?? path.join(workDir, 'fb.db'),
    '-r', dataRoot,
    '-a', '127.0.0.1',
    '-p', String(port),
    '--username', 'admin',
    '--password', passwordHash,
    '--cacheDir', cacheDir,
    '-l', '',
  ]; // prettier-ignore
  const child = track(
    spawn(process.execPath, args, {
      cwd: workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: launch.env,
    }),
  );
  let output = '';
  const keep = (/** @type {Buffer} */ chunk) => {
    output = (output + chunk.toString()).slice(-8192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // e.g. with BENCH_SERVER_NODE_ARGS=--trace-gc: the server's whole output, appended to a file
  // (the harness keeps only its last 8 KiB, for errors).
  const outputFile = process.env.BENCH_SERVER_OUTPUT;
  if (outputFile) {
    const sink = fs.createWriteStream(outputFile, { flags: 'a' });
    child.stdout?.pipe(sink);
    child.stderr?.pipe(sink);
  }
  const pid = /** @type {number} */ (child.pid);
  const base = `http://127.0.0.1:${port}`;

  // wait for /health (bounded), failing fast if the process dies
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `server exited (${child.exitCode ?? child.signalCode}) during start:\n${output.trim()}`,
      );
    }
    try {
      const r = await request(`${base}/health`, { timeoutMs: 2000 });
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`server did not answer /health within 30 s:\n${output.trim()}`);
    }
    await sleep(100);
  }

  const login = await request(`${base}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
    collect: true,
    timeoutMs: 15_000,
  });
  const token = login.body?.toString().trim() ?? '';
  if (login.status !== 200 || token.split('.').length !== 3) {
    await stopChild(child);
    throw new Error(`login failed: HTTP ${login.status} ${token.slice(0, 200)}\n${output.trim()}`);
  }
  const settings = [
    ...Object.entries(launch.env)
      .filter(([name]) => name.startsWith('MALLOC_'))
      .map(([name, value]) => `${name}=${value}`),
    ...launch.nodeArgs,
  ];
  log(
    `server: pid ${pid} on ${base}` +
      (settings.length ? ` (${settings.join(' ')})` : '') +
      (serverLaunch ? '' : '; no process-settings.js beside the entry: an older build'),
  );
  watchCpu('server', pid);

  // sample RSS while we run, in case /proc VmHWM is unavailable at the end
  let sampledMaxKiB = /** @type {number | null} */ (null);
  const sampler = setInterval(() => {
    const rss = procStatusKiB(pid, 'VmRSS');
    if (rss !== null) sampledMaxKiB = Math.max(sampledMaxKiB ?? 0, rss);
  }, 250);
  sampler.unref();

  return {
    base,
    token,
    password,
    pid,
    cacheDir,
    auth: () => ({ 'X-Auth': token }),
    basic: () => ({ Authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` }),
    memory: () => ({ peakKiB: procStatusKiB(pid, 'VmHWM'), sampledMaxKiB }),
    stop: async () => {
      clearInterval(sampler);
      await stopChild(child);
    },
  };
}
