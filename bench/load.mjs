// `npm run load`: many concurrent connections against the built server on 127.0.0.1, for a
// bounded time, on a folder listing, a file download, sign-ins and a public share page, then a
// mixed scenario: one user's many parallel heavy requests (a 100,000-entry listing, PROPFIND,
// search) while another user downloads a small file. With `--database postgres://…` the server
// runs on PostgreSQL, and with `--instances N` N servers share it and the folder behind a round-
// robin nginx. It reports latency percentiles, errors and each server's peak memory, and exits 1
// when a request failed, memory went over the bound, or the small downloads' p99 reached the
// limit. See docs/performance.md ("Load").
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { Worker } from 'node:worker_threads';
import { cleanupAll, installCleanupHandlers, setKeepDirs, trackDir } from './lib/cleanup.mjs';
import { loopbackUrl, request } from './lib/http.mjs';
import { startBalancer } from './lib/balancer.mjs';
import { freshDatabase, isPostgresUrl } from './lib/postgres.mjs';
import { procStatusKiB, startServer } from './lib/server.mjs';

const repoRoot = path.resolve(import.meta.dirname, '..');

const USAGE = `usage: npm run load [-- options]

  --connections <n>   concurrent keep-alive connections (default 200, env LOAD_CONNECTIONS)
  --duration <s>      seconds per scenario (default 30, env LOAD_DURATION)
  --only <ids>        list, download, login, share, mixed (default all five)
  --database <url>    run on PostgreSQL (postgres://…): a database of the run's own is made there
  --instances <n>     servers on that database and one folder, behind a round-robin nginx (default 1)
  --heavy <n>         parallel heavy requests of the mixed scenario (default 16)
  --p99-limit <ms>    fail when the mixed scenario's small downloads reach this p99 (default 100)
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
    only: ['list', 'download', 'login', 'share', 'mixed'],
    /** @type {string | undefined} */
    database: env.LOAD_DATABASE || undefined,
    instances: 1,
    heavy: 16,
    p99LimitMs: 100,
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
    else if (arg === '--database') opts.database = value();
    else if (arg === '--instances') opts.instances = Number(value());
    else if (arg === '--rss-limit') opts.rssLimitMiB = Number(value());
    else if (arg === '--heavy') opts.heavy = Number(value());
    else if (arg === '--p99-limit') opts.p99LimitMs = Number(value());
    else if (arg === '--out') opts.out = path.resolve(value());
    else if (arg === '--keep') opts.keep = true;
    else if (arg === '--help' || arg === '-h') opts.help = true;
    else throw new Error(`unknown option ${arg}`);
  }
  for (const [name, n] of [
    ['--connections', opts.connections],
    ['--duration', opts.duration],
    ['--rss-limit', opts.rssLimitMiB],
    ['--heavy', opts.heavy],
    ['--p99-limit', opts.p99LimitMs],
    ['--instances', opts.instances],
  ]) {
    if (!Number.isInteger(n) || Number(n) < 1) throw new Error(`${name} must be a positive whole number`);
  }
  if (opts.instances > 1 && !opts.database) throw new Error('--instances needs --database postgres://…');
  if (opts.database && !isPostgresUrl(opts.database)) throw new Error('--database takes a postgres:// URL');
  for (const id of opts.only) {
    if (!SCENARIOS.some((s) => s.id === id) && id !== 'mixed') {
      throw new Error(`unknown scenario "${id}" (list, download, login, share, mixed)`);
    }
  }
  return opts;
}

/** Entries of the mixed scenario's big folder. */
const BIG_ENTRIES = 100_000;

/**
 * A 200-entry folder (the old report's case) and a 1 MiB file; with `big`, the mixed scenario's
 * folder of 100,000 empty files and an 11-byte file.
 * @param {string} dataRoot
 * @param {boolean} big
 */
function createData(dataRoot, big) {
  const folder = path.join(dataRoot, 'folder');
  fs.mkdirSync(folder, { recursive: true });
  const line = 'the quick brown fox jumps over the lazy dog\n';
  for (let i = 0; i < 200; i++) {
    const name = `file-${String(i).padStart(3, '0')}${['.txt', '.jpg', '.md', '.pdf'][i % 4]}`;
    fs.writeFileSync(path.join(folder, name), line.repeat(1 + (i % 50)));
  }
  fs.writeFileSync(path.join(dataRoot, 'download.bin'), Buffer.alloc(1024 * 1024, 0x61));
  if (!big) return;
  const many = path.join(dataRoot, 'big');
  fs.mkdirSync(many);
  for (let i = 0; i < BIG_ENTRIES; i++) {
    fs.closeSync(fs.openSync(path.join(many, `entry-${String(i).padStart(6, '0')}.txt`), 'w'));
  }
  fs.writeFileSync(path.join(dataRoot, 'small.txt'), 'hello world');
}

/**
 * What autocannon sends for each scenario: `prepare` (once, before) answers the request, given the
 * servers' front (one server, or the balancer) and the administrator's session.
 * @typedef {{ base: string, auth: () => Record<string, string>, password: string }} Front
 * @type {Array<{ id: string, title: string, connections?: number, prepare: (front: Front) => Promise<{ path: string, method?: 'GET' | 'POST', headers: Record<string, string>, body?: string }> }>}
 */
const SCENARIOS = [
  {
    id: 'list',
    title: 'listing of a 200-entry folder',
    prepare: async (front) => ({ path: '/api/resources/folder/', headers: front.auth() }),
  },
  {
    id: 'download',
    title: 'download of a 1 MiB file',
    prepare: async (front) => ({ path: '/api/raw/download.bin', headers: front.auth() }),
  },
  {
    // bcrypt's cost is the measure: a sign-in is meant to be slow (docs/security.md). Sign-ins in
    // flight count against the per-address throttle (10 by default), so fewer connections, from
    // one address: 8 keep both cores busy.
    id: 'login',
    title: 'sign-in (bcrypt, a new session each)',
    connections: 8,
    prepare: async (front) => ({
      path: '/api/login',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: front.password }),
    }),
  },
  {
    id: 'share',
    title: "a public share's page (the folder's listing)",
    prepare: async (front) => {
      const made = await request(`${front.base}/api/share/folder/`, {
        collect: true,
        method: 'POST',
        headers: { ...front.auth(), 'content-type': 'application/json' },
        body: '{}',
      });
      const hash = JSON.parse(made.body?.toString() ?? '{}').hash;
      if (made.status !== 200 || !hash) throw new Error(`the share was not made: ${made.status}`);
      return { path: `/api/public/share/${hash}`, headers: {} };
    },
  },
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

/**
 * The mixed scenario: `heavy` connections of the administrator cycle through a listing of the
 * 100,000-entry folder, a PROPFIND of it with Depth 1 and a search in it (in a worker thread of
 * their own, so that receiving them does not delay the measuring side), while a second user
 * downloads an 11-byte file over one connection, one request after the other. The small
 * downloads' latency is what is reported: one user's load must not stall another's request.
 * @param {Awaited<ReturnType<typeof startServer>>} server
 * @param {{ heavy: number, duration: number }} opts
 */
async function mixed(server, opts) {
  const reader = { username: 'reader', password: 'reader-password-for-load' };
  const basic = server.basic();
  const adminPassword = Buffer.from((basic.Authorization ?? '').slice('Basic '.length), 'base64')
    .toString()
    .slice('admin:'.length);
  const made = await request(`${server.base}/api/users`, {
    collect: true,
    method: 'POST',
    headers: { ...server.auth(), 'content-type': 'application/json' },
    body: JSON.stringify({
      what: 'user',
      which: [],
      current_password: adminPassword,
      data: {
        ...reader,
        scope: '/',
        perm: {
          admin: false,
          execute: false,
          create: false,
          rename: false,
          modify: false,
          delete: false,
          share: false,
          download: true,
        },
      },
    }),
  });
  if (made.status !== 201)
    throw new Error(`the second user was not made: ${made.status} ${made.body?.toString()}`);
  const login = await request(`${server.base}/api/login`, {
    collect: true,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(reader),
  });
  const readerToken = login.body?.toString().trim() ?? '';
  if (login.status !== 200) throw new Error(`the second user cannot sign in: ${login.status}`);

  const base = loopbackUrl(server.base).toString().replace(/\/$/, '');
  /** @type {Promise<{ requests: number, statuses: Record<string, number>, errors: number, p50ms: number, p99ms: number }>} */
  const heavy = new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./lib/heavy-load.mjs', import.meta.url), {
      workerData: {
        connections: opts.heavy,
        seconds: opts.duration,
        requests: [
          { method: 'GET', url: `${base}/api/resources/big/`, headers: server.auth() },
          {
            method: 'PROPFIND',
            url: `${base}/dav/big/`,
            headers: { ...basic, Depth: '1', 'content-type': 'application/xml' },
            body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>',
          },
          { method: 'GET', url: `${base}/api/search/big/?query=entry-09999`, headers: server.auth() },
        ],
      },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const small = cannon({
    url: loopbackUrl(`${server.base}/api/raw/small.txt`).toString(),
    connections: 1,
    duration: opts.duration,
    headers: { 'X-Auth': readerToken },
    timeout: 60,
  });
  const [h, r] = await Promise.all([heavy, small]);
  const ok = Object.entries(h.statuses)
    .filter(([status]) => status.startsWith('2'))
    .reduce((n, [, count]) => n + count, 0);
  return {
    heavy: {
      connections: opts.heavy,
      requests: h.requests,
      statuses: h.statuses,
      errors: h.errors,
      // 429 is the heavy side's answer past its user's queue (docs/configuration.md): counted apart.
      status429: h.statuses['429'] ?? 0,
      other: h.requests - ok - (h.statuses['429'] ?? 0),
      p50ms: h.p50ms,
      p99ms: h.p99ms,
    },
    small: {
      requests: r.requests.total,
      errors: r.errors,
      timeouts: r.timeouts,
      non2xx: r.non2xx,
      p50ms: r.latency.p50,
      p90ms: r.latency.p90,
      p99ms: r.latency.p99,
      maxMs: r.latency.max,
    },
  };
}

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
  createData(dataRoot, opts.only.includes('mixed'));
  const database = opts.database ? await freshDatabase(opts.database) : undefined;
  /** @type {Awaited<ReturnType<typeof startServer>>[]} */
  const servers = [];
  /** @type {{ base: string, stop: () => Promise<void> } | undefined} */
  let balancer;
  try {
    // One after the other: the first makes the schema and the administrator, the others join.
    for (let i = 0; i < opts.instances; i++) {
      servers.push(
        await startServer({
          entry,
          workDir,
          dataRoot,
          log,
          database: database?.url,
          ...(servers[0] && { password: servers[0].password }),
        }),
      );
    }
    if (opts.instances > 1)
      balancer = await startBalancer({ workDir, upstreams: servers.map((s) => s.base), log });
  } catch (err) {
    for (const s of servers) await s.stop();
    await database?.drop();
    throw err;
  }
  const first = /** @type {Awaited<ReturnType<typeof startServer>>} */ (servers[0]);
  // What the clients talk to: the one server, or the balancer in front of them all.
  const server = { ...first, base: balancer?.base ?? first.base };
  const idleKiB = Math.max(...servers.map((s) => procStatusKiB(s.pid, 'VmRSS') ?? 0));

  const results = [];
  /** @type {number | null} */
  let peakKiB = null;
  /** @type {Array<number | null>} each instance's peak RSS, MiB */
  const peakPerInstance = [];
  /** @type {Awaited<ReturnType<typeof mixed>> | undefined} */
  let mixedResult;
  try {
    for (const scenario of SCENARIOS.filter((s) => opts.only.includes(s.id))) {
      const sent = await scenario.prepare(server);
      const url = loopbackUrl(`${server.base}${sent.path}`).toString();
      const connections = Math.min(opts.connections, scenario.connections ?? opts.connections);
      log(`${scenario.title}: ${connections} connections for ${opts.duration} s`);
      let sampledMaxKiB = 0;
      const sampler = setInterval(() => {
        for (const s of servers) sampledMaxKiB = Math.max(sampledMaxKiB, procStatusKiB(s.pid, 'VmRSS') ?? 0);
      }, 200);
      const r = await cannon({
        url,
        connections,
        duration: opts.duration,
        method: sent.method ?? 'GET',
        headers: sent.headers,
        ...(sent.body !== undefined && { body: sent.body }),
        // a slow answer under load is a result to report, not a failure of the tool
        timeout: 60,
      });
      clearInterval(sampler);
      results.push({
        id: scenario.id,
        title: scenario.title,
        connections,
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
    if (opts.only.includes('mixed')) {
      log(
        `mixed: ${opts.heavy} connections of heavy requests on a ${BIG_ENTRIES}-entry folder ` +
          `and one user's small downloads for ${opts.duration} s`,
      );
      mixedResult = await mixed(server, opts);
    }
  } finally {
    /** @type {Array<number | null>} */
    const peaks = servers.map((s) => s.memory().peakKiB);
    peakKiB = peaks.every((p) => p !== null) ? Math.max(.../** @type {number[]} */ (peaks)) : null;
    peakPerInstance.push(...peaks.map(mib));
    await balancer?.stop();
    for (const s of servers) await s.stop();
    await database?.drop().catch((err) => log(`could not drop the run's database: ${err}`));
  }

  const report = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown' },
    database: opts.database ? 'postgres' : 'sqlite',
    instances: opts.instances,
    idleRssMiB: mib(idleKiB),
    peakRssMiB: mib(peakKiB),
    peakRssPerInstanceMiB: peakPerInstance,
    rssLimitMiB: opts.rssLimitMiB,
    scenarios: results,
    ...(mixedResult && { mixed: { ...mixedResult, p99LimitMs: opts.p99LimitMs, seconds: opts.duration } }),
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
  if (mixedResult) {
    const { heavy: h, small: m } = mixedResult;
    console.log('');
    console.log(
      `| mixed, ${opts.duration} s | requests | p50 ms | p90 ms | p99 ms | max ms | errors | 429 or non-2xx |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(
      `| heavy: ${h.connections} connections (listing, PROPFIND, search of ${BIG_ENTRIES} entries) | ${h.requests} | ${h.p50ms} | | ${h.p99ms} | | ${h.errors} | ${h.status429} |`,
    );
    console.log(
      `| small: another user's 11-byte download, 1 connection | ${m.requests} | ${m.p50ms} | ${m.p90ms} | ${m.p99ms} | ${m.maxMs} | ${m.errors + m.timeouts} | ${m.non2xx} |`,
    );
  }
  console.log(
    `${opts.instances > 1 ? `${opts.instances} instances on PostgreSQL behind nginx; the highest ` : ''}server RSS: ` +
      `idle ${report.idleRssMiB} MiB, peak ${report.peakRssMiB} MiB (limit ${opts.rssLimitMiB} per instance)` +
      (opts.instances > 1 ? `; peaks ${peakPerInstance.join(', ')} MiB` : ''),
  );

  const failures = [];
  for (const r of results) {
    if (r.errors + r.timeouts > 0) failures.push(`${r.id}: ${r.errors} errors, ${r.timeouts} timeouts`);
    if (r.non2xx > 0) failures.push(`${r.id}: ${r.non2xx} answers that were not 2xx`);
  }
  if (mixedResult) {
    const { heavy: h, small: m } = mixedResult;
    if (m.errors + m.timeouts + m.non2xx > 0) failures.push(`mixed: the small downloads had failures`);
    if (h.errors > 0) failures.push(`mixed: ${h.errors} heavy requests failed`);
    if (h.other > 0) failures.push(`mixed: ${h.other} heavy answers neither 2xx nor 429`);
    if (m.p99ms >= opts.p99LimitMs) {
      failures.push(`mixed: the small downloads' p99 is ${m.p99ms} ms, not under ${opts.p99LimitMs} ms`);
    }
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
