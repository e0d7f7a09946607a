// Child-process helpers: finding reference tools, timing them, free ports.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { track } from './cleanup.mjs';

/**
 * Finds an executable on PATH (plus the sbin folders, where Debian puts nginx).
 * @param {string} name
 * @returns {string | null}
 */
export function which(name) {
  const dirs = (process.env.PATH ?? '')
    .split(path.delimiter)
    .concat(['/usr/sbin', '/usr/local/sbin', '/sbin']);
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** @returns {Promise<number>} a TCP port on 127.0.0.1 that was free a moment ago */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * @typedef {object} ToolRun
 * @property {number} code exit code (-1 when killed by a signal)
 * @property {number} seconds wall time from spawn to exit
 * @property {number} stdoutBytes bytes the tool wrote to stdout
 * @property {number} lines newline count on stdout (when countLines)
 * @property {number | null} firstLineMs time to the first stdout newline (when countLines)
 * @property {number | null} lastLineMs time to the last stdout newline (when countLines)
 * @property {string} stderr last 4 KiB of stderr
 */

/**
 * Runs a reference tool, consuming its stdout (so it pays the same "send the bytes somewhere"
 * cost as our server does over a socket), and times it. Killed after timeoutMs.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, timeoutMs?: number, countLines?: boolean, env?: NodeJS.ProcessEnv }} [options]
 * @returns {Promise<ToolRun>}
 */
export function runTool(cmd, args, options = {}) {
  const { cwd, timeoutMs = 30 * 60_000, countLines = false, env } = options;
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = track(spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdoutBytes = 0;
    let lines = 0;
    /** @type {number | null} */
    let firstLineMs = null;
    /** @type {number | null} */
    let lastLineMs = null;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout?.on('data', (/** @type {Buffer} */ chunk) => {
      stdoutBytes += chunk.length;
      if (countLines) {
        let idx = chunk.indexOf(10);
        if (idx !== -1) {
          lastLineMs = performance.now() - start;
          firstLineMs ??= lastLineMs;
        }
        while (idx !== -1) {
          lines++;
          idx = chunk.indexOf(10, idx + 1);
        }
      }
    });
    child.stderr?.on('data', (/** @type {Buffer} */ chunk) => {
      stderr = (stderr + chunk.toString()).slice(-4096);
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: code ?? -1,
        seconds: (performance.now() - start) / 1000,
        stdoutBytes,
        lines,
        firstLineMs,
        lastLineMs,
        stderr,
      });
    });
  });
}

/**
 * Like runTool but fails on a non-zero exit.
 * @param {string} cmd
 * @param {string[]} args
 * @param {Parameters<typeof runTool>[2]} [options]
 */
export async function runToolOk(cmd, args, options) {
  const run = await runTool(cmd, args, options);
  if (run.code !== 0) {
    throw new Error(`${path.basename(cmd)} exited with ${run.code}: ${run.stderr.trim().slice(-500)}`);
  }
  return run;
}
