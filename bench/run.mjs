// `npm run bench`: measures the built server against reference tools on the same data, on the
// same machine, in the same run, and reports ratios. See docs/performance.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApache } from './lib/apache.mjs';
import { cleanupAll, installCleanupHandlers, setKeepDirs, trackDir, wasInterrupted } from './lib/cleanup.mjs';
import { createDataset, diskNeed, sizesFor } from './lib/dataset.mjs';
import { startNginx } from './lib/nginx.mjs';
import { parseOptions, USAGE } from './lib/options.mjs';
import { evaluate, formatTable, writeJson } from './lib/report.mjs';
import { freshDatabase } from './lib/postgres.mjs';
import { startServer } from './lib/server.mjs';
import { fmtSize } from './lib/units.mjs';
import { archiveRow } from './rows/archive.mjs';
import { davRow } from './rows/dav.mjs';
import { downloadRow } from './rows/download.mjs';
import { listRow } from './rows/list.mjs';
import { millionRow } from './rows/million.mjs';
import { putRow } from './rows/put.mjs';
import { searchRow } from './rows/search.mjs';
import { thumbsRow } from './rows/thumbs.mjs';
import { uploadRow } from './rows/upload.mjs';

const repoRoot = path.resolve(import.meta.dirname, '..');
/** @type {import('./lib/context.mjs').Row[]} */
const ROWS = [listRow, downloadRow, uploadRow, putRow, archiveRow, searchRow, thumbsRow, davRow, millionRow];

/** @param {string} msg */
const log = (msg) => console.error(`bench: ${msg}`);

/**
 * Memoises an async factory.
 * @template T
 * @param {() => Promise<T>} make
 * @returns {() => Promise<T>}
 */
function lazy(make) {
  /** @type {Promise<T> | null} */
  let p = null;
  return () => (p ??= make());
}

/** Describes the machine, for the JSON. */
function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: +(os.totalmem() / 1024 ** 3).toFixed(1),
    loadAverage: os.loadavg().map((n) => +n.toFixed(2)),
  };
}

async function main() {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`bench: ${/** @type {Error} */ (err).message}\n\n${USAGE}`);
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
    console.error(`bench: ${path.relative(repoRoot, entry) || entry} not found: run npm run build first`);
    return 1;
  }

  installCleanupHandlers();
  setKeepDirs(opts.keep);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-bench-'));
  trackDir(workDir);
  const sizes = sizesFor(opts.scale);
  const need = diskNeed(sizes);
  const free = fs.statfsSync(workDir).bavail * fs.statfsSync(workDir).bsize;
  if (free < need * 1.2) {
    console.error(
      `bench: ${fmtSize(free)} free in ${os.tmpdir()}, the data set needs about ${fmtSize(need)}`,
    );
    return 1;
  }
  log(`scale ${opts.scale}, rows ${[...opts.rows].join(',')}, temp folder ${workDir}`);

  const dataRoot = path.join(workDir, 'data');
  // On PostgreSQL: a database of the run's own, made when the server first starts.
  /** @type {{ url: string, drop: () => Promise<void> } | undefined} */
  let pgDatabase;
  const db = async () => {
    if (!opts.database) return undefined;
    pgDatabase ??= await freshDatabase(opts.database);
    return pgDatabase.url;
  };
  const data = createDataset(dataRoot, sizes, log);
  /** @type {{ server: import('./lib/server.mjs').Server | null, nginx: import('./lib/nginx.mjs').Nginx | null, apache: import('./lib/apache.mjs').Apache | null }} */
  const running = { server: null, nginx: null, apache: null };
  /** @type {import('./lib/context.mjs').Context} */
  const ctx = {
    opts,
    data,
    workDir,
    log,
    server: lazy(
      async () =>
        (running.server = await startServer({ entry, workDir, dataRoot, log, database: await db() })),
    ),
    nginx: lazy(async () => {
      const uploads = (await data.uploads()).rel;
      return (running.nginx = await startNginx({
        workDir,
        dataRoot,
        uploads,
        workers: opts.nginxWorkers,
        log,
      }));
    }),
    apache: lazy(async () => {
      // The folder PUT writes into must exist before httpd starts (it is handed to httpd's user).
      const writable = [(await data.uploads()).abs];
      return (running.apache = await startApache({ workDir, dataRoot, writable, log }));
    }),
  };

  /** @type {import('./lib/report.mjs').RowResult[]} */
  const results = [];
  /** The server's peak RSS after each row: where it rises is the row that set it. */
  /** @type {{ after: string, peakMB: number }[]} */
  const peakAfterRow = [];
  const startedAt = new Date();
  try {
    // Every row measures our server: a server that cannot start ends the run here.
    try {
      await ctx.server();
    } catch (err) {
      console.error(`bench: cannot start the server: ${/** @type {Error} */ (err).message}`);
      return 1;
    }
    for (const row of ROWS) {
      if (wasInterrupted()) break;
      if (!row.ids.some((id) => opts.rows.has(id))) continue;
      log(`row ${row.ids.join('+')}…`);
      const t0 = Date.now();
      const rowResults = await row.run(ctx);
      for (const r of rowResults) {
        log(`  ${r.title}: ${r.reason ?? r.status}${r.ratio !== null ? ` (${r.ratio.toFixed(2)}x)` : ''}`);
        // The median samples' details end with their CPU seconds: the figure that holds on a busy machine.
        if (r.ours?.detail) log(`    ours: ${r.ours.detail}`);
        if (r.reference?.detail) log(`    ${r.reference.tool}: ${r.reference.detail}`);
        if (r.second?.detail) log(`    ${r.second.tool}: ${r.second.detail}`);
      }
      results.push(...rowResults);
      const mem = (await ctx.server()).memory();
      const kib = mem.peakKiB ?? mem.sampledMaxKiB;
      const peakMB = kib === null ? null : Math.round(kib / 1024);
      if (peakMB !== null) peakAfterRow.push({ after: row.ids.join('+'), peakMB });
      log(
        `  took ${((Date.now() - t0) / 1000).toFixed(1)} s` +
          (peakMB !== null ? `, server peak RSS so far ${peakMB} MB` : ''),
      );
    }
    if (opts.rows.has('memory') && !wasInterrupted()) {
      const server = await ctx.server();
      const mem = server.memory();
      const kib = mem.peakKiB ?? mem.sampledMaxKiB;
      const side =
        kib === null
          ? new Error('/proc/<pid>/status not readable')
          : { value: kib / 1024, unit: 'MB', samples: [kib / 1024], measures: [] };
      results.push(
        evaluate({
          id: 'memory',
          title: 'server peak RSS (all rows)',
          target: { kind: 'max-value', value: 200, unit: 'MB' },
          ours: side,
          notes: mem.peakKiB === null ? ['VmHWM unavailable: highest sampled VmRSS shown'] : [],
        }),
      );
    }
  } finally {
    await running.server?.stop();
    await pgDatabase?.drop().catch((err) => log(`could not drop ${pgDatabase?.url}: ${err}`));
    await running.nginx?.stop();
    await running.apache?.stop();
    await cleanupAll();
  }
  if (wasInterrupted()) return 130;

  console.log(
    `\nFile Browser benchmark, scale ${opts.scale}, ${os.cpus().length} CPUs, Node ${process.version}\n`,
  );
  console.log(formatTable(results));
  const out = path.resolve(opts.out ?? path.join(repoRoot, 'bench/results/latest.json'));
  await writeJson(out, {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    scale: opts.scale,
    sizes,
    options: {
      durationMs: opts.durationMs,
      connections: opts.connections,
      reps: opts.reps,
      thumbConcurrency: opts.thumbConcurrency,
      nginxWorkers: opts.nginxWorkers,
    },
    machine: machine(),
    rows: results,
    peakAfterRow,
  });
  console.log(`\nJSON: ${path.relative(process.cwd(), out) || out}`);
  const bad = results.some((r) => r.status === 'fail' || r.status === 'error');
  return opts.strict && bad ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err) => {
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanupAll();
    process.exitCode = 1;
  },
);
