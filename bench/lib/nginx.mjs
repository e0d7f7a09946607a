// The nginx reference: a private instance (own config, pid, logs, temp folders) serving the data
// folder on 127.0.0.1 with sendfile and a JSON autoindex, and taking PUT uploads into one folder.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild, track } from './cleanup.mjs';
import { watchCpu } from './cpu.mjs';
import { request } from './http.mjs';
import { freePort, which } from './proc.mjs';

/**
 * @typedef {object} Nginx
 * @property {string} base e.g. http://127.0.0.1:41235
 * @property {number} workers
 * @property {() => Promise<void>} stop
 */

/** @param {string} p a path, double-quoted as nginx reads it */
export const esc = (p) => JSON.stringify(p);

/**
 * The top of a private nginx's configuration: in the foreground, its pid and error log in `dir`,
 * and (running as root) its workers as this user, who alone may read our 0700 temp folders.
 * @param {string} dir
 * @param {number} workers
 * @param {number} connections per worker
 */
export function privateNginx(dir, workers, connections) {
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username};` : '';
  return `daemon off;
master_process on;
worker_processes ${workers};
${user}
pid ${esc(path.join(dir, 'nginx.pid'))};
error_log ${esc(path.join(dir, 'error.log'))} warn;
events { worker_connections ${connections}; }`;
}

/**
 * Every temp folder of the http block inside `dir` (none in the system's).
 * @param {string} dir
 */
export function tempPaths(dir) {
  return ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${esc(path.join(dir, kind === 'client_body' ? 'body' : kind))};`)
    .join('\n');
}

/**
 * @param {{ workDir: string, dataRoot: string, uploads: string, workers: number, log: (msg: string) => void }} options
 *   uploads: the folder below dataRoot (relative, existing) that takes PUT requests
 * @returns {Promise<Nginx | null>} null when nginx is not installed
 */
export async function startNginx({ workDir, dataRoot, uploads, workers, log }) {
  const bin = which('nginx');
  if (!bin) return null;
  const dir = path.join(workDir, 'nginx');
  // nginx receives a body into a temp file and renames it into place: beside the uploads on the
  // same file system, that is a rename as ours is, not a second copy of every byte.
  const putTemp = path.join(dir, 'put-body');
  fs.mkdirSync(putTemp, { recursive: true });
  const uploadsAbs = path.join(dataRoot, uploads);
  if (fs.statSync(putTemp).dev !== fs.statSync(uploadsAbs).dev) {
    throw new Error(`nginx: ${putTemp} and ${uploadsAbs} are on different file systems`);
  }
  const port = await freePort();
  const conf = `
${privateNginx(dir, workers, 1024)}
http {
  access_log off;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 65;
${tempPaths(dir)}
  server {
    listen 127.0.0.1:${port};
    root ${esc(dataRoot)};
    location / {
      autoindex on;
      autoindex_format json;
    }
    location /${uploads}/ {
      dav_methods PUT;
      create_full_put_path on;
      client_max_body_size 0;
      client_body_temp_path ${esc(putTemp)};
    }
  }
}
`;
  const confFile = path.join(dir, 'nginx.conf');
  fs.writeFileSync(confFile, conf);
  const errorLog = path.join(dir, 'error.log');
  const child = track(
    spawn(bin, ['-p', dir, '-c', confFile, '-e', errorLog], { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  let stderr = '';
  child.stderr?.on('data', (/** @type {Buffer} */ c) => (stderr = (stderr + c.toString()).slice(-4096)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const logText = fs.existsSync(errorLog) ? fs.readFileSync(errorLog, 'utf8').slice(-2000) : '';
      throw new Error(`nginx exited during start: ${stderr.trim()} ${logText.trim()}`);
    }
    try {
      const r = await request(`${base}/`, { timeoutMs: 2000 });
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('nginx did not answer within 15 s');
    }
    await sleep(100);
  }
  log(`nginx: pid ${child.pid} on ${base} (${workers} worker${workers === 1 ? '' : 's'})`);
  watchCpu('reference', /** @type {number} */ (child.pid));
  return { base, workers, stop: () => stopChild(child) };
}
