// CPU seconds spent per sample: on a machine shared with other work, wall-clock figures swing
// with the neighbours, while the CPU a side needed for the same bytes barely moves.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** @type {number | null} */
let ticksPerSecond = null;

function clockTicks() {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100; // Linux's USER_HZ everywhere it runs
    }
  }
  return ticksPerSecond;
}

/**
 * Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses).
 * @param {number | 'self'} pid
 * @returns {string[] | null}
 */
function statFields(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * utime + stime of a process (all its threads), in seconds; null when /proc cannot tell.
 * @param {number} pid
 */
export function processCpuSeconds(pid) {
  const f = statFields(pid);
  // After the name: state(0) … utime(11) stime(12) cutime(13) cstime(14)
  return f ? (Number(f[11]) + Number(f[12])) / clockTicks() : null;
}

/** @param {number} pid */
function childPids(pid) {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU of a server made of a master and its worker processes (nginx, Apache).
 * @param {number} pid
 */
function treeCpuSeconds(pid) {
  const own = processCpuSeconds(pid);
  if (own === null) return null;
  return childPids(pid).reduce((sum, child) => sum + (processCpuSeconds(child) ?? 0), own);
}

/**
 * CPU of the tools this process started and has reaped (cutime + cstime of the harness): a
 * reference tool's own rusage, its children included (tar's gzip), once it has exited.
 */
function reapedToolsCpuSeconds() {
  const f = statFields('self');
  return f ? (Number(f[13]) + Number(f[14])) / clockTicks() : 0;
}

/** @type {{ server: number | null, references: number[] }} */
const watched = { server: null, references: [] };

/**
 * Names the processes whose CPU the samples report: our server, or a reference server (with
 * its workers).
 * @param {'server' | 'reference'} role
 * @param {number} pid
 */
export function watchCpu(role, pid) {
  if (role === 'server') watched.server = pid;
  else watched.references.push(pid);
}

/**
 * @typedef {object} CpuFigures seconds of CPU during one sample
 * @property {number | null} server our server process
 * @property {number | null} reference reference servers (nginx, Apache: master and workers) and
 *   reference tools that ran and exited during the sample
 * @property {number} harness this process: the client side of every request
 */

/** @returns {() => CpuFigures} stops the meter started now and returns what each side spent */
export function startCpuMeter() {
  const read = () => ({
    server: watched.server === null ? null : processCpuSeconds(watched.server),
    reference: watched.references.reduce(
      (sum, pid) => sum + (treeCpuSeconds(pid) ?? 0),
      reapedToolsCpuSeconds(),
    ),
    harness: process.cpuUsage(),
  });
  const before = read();
  return () => {
    const after = read();
    const delta = (/** @type {number | null} */ a, /** @type {number | null} */ b) =>
      a === null || b === null ? null : round(b - a);
    return {
      server: delta(before.server, after.server),
      reference: delta(before.reference, after.reference),
      harness: round(
        (after.harness.user + after.harness.system - before.harness.user - before.harness.system) / 1e6,
      ),
    };
  };
}

/** @param {number} s */
const round = (s) => Math.round(s * 1000) / 1000;
