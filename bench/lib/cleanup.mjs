// Everything the harness creates (temp folders, child processes) is registered here and
// removed on normal exit, on error and on Ctrl-C.
import fs from 'node:fs';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */

/** @type {Set<ChildProcess>} */
const children = new Set();
/** @type {string[]} */
const dirs = [];
/** @type {(() => void)[]} */
const beforeRemoving = [];
let keepDirs = false;
let installed = false;
let interrupted = false;

/**
 * Tracks a child process until it exits.
 * @param {ChildProcess} child
 * @returns {ChildProcess}
 */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * Registers a folder to delete at the end (unless --keep).
 * @param {string} dir
 */
export function trackDir(dir) {
  dirs.push(dir);
}

/**
 * Runs `fn` (synchronous) before the registered folders are deleted, also on Ctrl-C: e.g. to
 * move a cached data set out of the run's folder.
 * @param {() => void} fn
 */
export function beforeRemovingDirs(fn) {
  beforeRemoving.push(fn);
}

/** @param {boolean} keep */
export function setKeepDirs(keep) {
  keepDirs = keep;
}

/** @returns {boolean} true once Ctrl-C (or SIGTERM) was received */
export function wasInterrupted() {
  return interrupted;
}

/**
 * Stops one child: SIGTERM, then SIGKILL after a grace period.
 * @param {ChildProcess} child
 * @param {number} [graceMs]
 */
export async function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', () => resolve('exited')));
  child.kill('SIGTERM');
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, graceMs, 'timeout')));
  const winner = await Promise.race([exited, timeout]);
  clearTimeout(timer);
  if (winner === 'timeout') {
    child.kill('SIGKILL');
    await Promise.race([exited, sleep(2000)]);
  }
}

/** Removes registered folders (synchronous: also usable from the 'exit' event). */
function removeDirsSync() {
  for (const fn of beforeRemoving.splice(0)) {
    try {
      fn();
    } catch (err) {
      console.error(`bench: ${/** @type {Error} */ (err).message}`);
    }
  }
  if (keepDirs) {
    for (const dir of dirs) console.error(`bench: kept ${dir}`);
    dirs.length = 0;
    return;
  }
  while (dirs.length > 0) {
    const dir = /** @type {string} */ (dirs.pop());
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      console.error(`bench: could not remove ${dir}: ${/** @type {Error} */ (err).message}`);
    }
  }
}

/** Last resort when the process exits: signal children by pid, delete folders. */
function cleanupSync() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  removeDirsSync();
}

/** Orderly cleanup: stop every child we started, then delete our folders. */
export async function cleanupAll() {
  await Promise.all([...children].map((c) => stopChild(c, 3000)));
  removeDirsSync();
}

/** Installs the signal and exit handlers once. */
export function installCleanupHandlers() {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupSync);
  /** @param {NodeJS.Signals} signal */
  const onSignal = (signal) => {
    if (interrupted) {
      // second Ctrl-C: no more waiting
      cleanupSync();
      process.exit(130);
    }
    interrupted = true;
    console.error(`\nbench: ${signal} received, stopping child processes and removing temp folders…`);
    cleanupAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
}
