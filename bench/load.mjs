// `npm run load`: many concurrent connections against the built server on 127.0.0.1, for a
// bounded time, on a folder listing and a file download. It reports latency percentiles, errors
// and the server's peak memory, and exits 1 when a request failed or memory went over the bound.
// See docs/performance.md ("Load").
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { cleanupAll, installCleanupHandlers, setKeepDirs, trackDir } from './lib/cleanup.mjs';
import { loopbackUrl } from './lib/http.mjs';
import { procStatusKiB, startServer } from './lib/server.mjs';

const repoRoot = path.resolve(import.meta.dirname, '..');

const USAGE = `usage: npm run load [-- options]

  --connections <n>   concurrent keep-alive connections (default 200, env LOAD_CONNECTIONS)
  --duration <s>      seconds per scenario (default 30, env LOAD_DURATION)
  --only <ids>        list, download (default both)
  --rss-limit <MiB>   fail when the server's peak RSS goes over it (default 250)
  --out <file>        JSON results (default bench/results/load.json)
  --keep              keep the temp folder

  BENCH_SERVER_ENTRY=<file> loads another server entry instead of packages/server/dist/main.js
  (started with the process settings of its own build, as npm run bench does).`;

/** @param {string} msg */
const log = (msg) => console.error(`load: ${msg}`);

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 */
function parseOptions(argv, env) {
  const opts = {
    connections: Number(env.LOAD_CONNECTIONS || 200),
    duration: Number(env.LOAD_DURATION || 30),
    only: ['list', 'download'],
    rssLimitMiB: 250,
    out: path.join(repoRoot, 'bench/results/load.json'),
    keep: false,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--connections') opts.connections = Number(value());
    else if (arg === '--duration') opts.duration = Number(value());
    else if (arg === '--only') opts.only = value().split(',');
    else if (arg === '--rss-limit') opts.rssLimitMiB = Number(value());
    else if (arg === '--out') opts.out = path.resolve(value());
    else if (arg === '--keep') opts.keep = true;
    else if (arg === '--help' || arg === '-h') opts.help = true;
    else throw new Error(`unknown option ${arg}`);
  }
  for (const [name, n] of [
    ['--connections', opts.connections],
    ['--duration', opts.duration],
    ['--rss-limit', opts.rssLimitMiB],
  ]) {
    if (!Number.isInteger(n) || Number(n) < 1) throw new Error(`${name} must be a positive whole number`);
  }
  for (const id of opts.only) {
    if (!SCENARIOS.some((s) => s.id === id)) throw new Error(`unknown scenario "${id}" (list, download)`);
  }
  return opts;
}

/** A 200-entry folder (the old report's case) and a 1 MiB file. */
/** @param {string} dataRoot */
function createData(dataRoot) {
  const folder = path.join(dataRoot, 'folder');
  fs.mkdirSync(folder, { recursive: true });
  const line = 'the quick brown fox jumps over the lazy dog\n';
  for (let i = 0; i < 200; i++) {
    const name = `file-${String(i).padStart(3, '0')}${['.txt', '.jpg', '.md', '.pdf'][i % 4]}`;
    fs.writeFileSync(path.join(folder, name), line.repeat(1 + (i % 50)));
  }
  fs.writeFileSync(path.join(dataRoot, 'download.bin'), Buffer.alloc(1024 * 1024, 0x61));
}

const SCENARIOS = [
  { id: 'list', title: 'listing of a 200-entry folder', path: '/api/resources/folder/' },
  { id: 'download', title: 'download of a 1 MiB file', path: '/api/raw/download.bin' },
];

/**
 * @param {import('autocannon').Options} options
 * @returns {Promise<import('autocannon').Result>}
 */
function cannon(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** @param {number | null} kib */
const mib = (kib) => (kib === null ? null : +(kib / 1024).toFixed(1));

async function main() {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`load: ${/** @type {Error} */ (err).message}\n\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const entry = path.resolve(
    process.env.BENCH_SERVER_ENTRY || path.join(repoRoot, 'packages/server/dist/main.js'),
  );
  if (!fs.existsSync(entry)) {
    console.error(`load: ${entry} not found: run npm run build first`);
    return 1;
  }

  installCleanupHandlers();
  setKeepDirs(opts.keep);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-load-'));
  trackDir(workDir);
  const dataRoot = path.join(workDir, 'data');
  createData(dataRoot);
  const server = await startServer({ entry, workDir, dataRoot, log });
  const idleKiB = procStatusKiB(server.pid, 'VmRSS');

  const results = [];
  /** @type {number | null} */
  let peakKiB = null;
  try {
    for (const scenario of SCENARIOS.filter((s) => opts.only.includes(s.id))) {
      const url = loopbackUrl(`${server.base}${scenario.path}`).toString();
      log(`${scenario.title}: ${opts.connections} connections for ${opts.duration} s`);
      let sampledMaxKiB = 0;
      const sampler = setInterval(() => {
        sampledMaxKiB = Math.max(sampledMaxKiB, procStatusKiB(server.pid, 'VmRSS') ?? 0);
      }, 200);
      const r = await cannon({
        url,
        connections: opts.connections,
        duration: opts.duration,
        headers: server.auth(),
        // a slow answer under load is a result to report, not a failure of the tool
        timeout: 60,
      });
      clearInterval(sampler);
      results.push({
        id: scenario.id,
        title: scenario.title,
        connections: opts.connections,
        seconds: opts.duration,
        requests: r.requests.total,
        perSecond: Math.round(r.requests.average),
        mibPerSecond: +(r.throughput.average / 1024 / 1024).toFixed(1),
        p50ms: r.latency.p50,
        p99ms: r.latency.p99,
        maxMs: r.latency.max,
        errors: r.errors,
        timeouts: r.timeouts,
        non2xx: r.non2xx,
        peakRssMiB: mib(sampledMaxKiB),
      });
    }
  } finally {
    peakKiB = server.memory().peakKiB;
    await server.stop();
  }

  const report = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown' },
    idleRssMiB: mib(idleKiB),
    peakRssMiB: mib(peakKiB),
    rssLimitMiB: opts.rssLimitMiB,
    scenarios: results,
  };
  fs.mkdirSync(path.dirname(opts.out), { recursive: true });
  fs.writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);

  console.log(
    `| scenario | connections × s | requests | req/s | p50 ms | p99 ms | errors | non-2xx | peak RSS MiB |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.title} | ${r.connections} × ${r.seconds} | ${r.requests} | ${r.perSecond} | ${r.p50ms} | ${r.p99ms} | ${r.errors + r.timeouts} | ${r.non2xx} | ${r.peakRssMiB} |`,
    );
  }
  console.log(
    `server RSS: idle ${report.idleRssMiB} MiB, peak ${report.peakRssMiB} MiB (limit ${opts.rssLimitMiB})`,
  );

  const failures = [];
  for (const r of results) {
    if (r.errors + r.timeouts > 0) failures.push(`${r.id}: ${r.errors} errors, ${r.timeouts} timeouts`);
    if (r.non2xx > 0) failures.push(`${r.id}: ${r.non2xx} answers that were not 2xx`);
  }
  if ((report.peakRssMiB ?? 0) > opts.rssLimitMiB) {
    failures.push(`server peak RSS ${report.peakRssMiB} MiB is over ${opts.rssLimitMiB} MiB`);
  }
  for (const f of failures) console.error(`load: FAILED ${f}`);
  return failures.length ? 1 : 0;
}

main()
  .then(async (code) => {
    await cleanupAll();
    process.exitCode = code;
  })
  .catch(async (err) => {
    console.error(`load: ${err instanceof Error ? err.stack : err}`);
    await cleanupAll();
    process.exitCode = 1;
  });
