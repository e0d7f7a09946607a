// Command line and environment options of `npm run bench`.
import os from 'node:os';

/** Row ids in run order; "archive" is an alias for zip + targz, "dav" for the three WebDAV rows. */
export const ROW_IDS = [
  'list',
  'download',
  'upload',
  'put',
  'zip',
  'targz',
  'search',
  'thumbs',
  'dav-propfind',
  'dav-put',
  'dav-get',
  'million',
  'memory',
];
const ALIASES = /** @type {Record<string, string[]>} */ ({
  archive: ['zip', 'targz'],
  dav: ['dav-propfind', 'dav-put', 'dav-get'],
});

export const USAGE = `usage: npm run bench -- [options]

  --only <ids>          comma-separated rows: ${ROW_IDS.join(', ')}
                        (archive = zip,targz; dav = dav-propfind,dav-put,dav-get)
  --scale <n>           data-set scale, default $BENCH_SCALE or 1 (0.05 = quick smoke run)
  --duration <s>        seconds per side for the listing load, default $BENCH_DURATION or 10 x scale (2..10)
  --connections <n>     keep-alive connections for the listing load, default $BENCH_CONNECTIONS or 8
  --reps <n>            repetitions per side for the other rows (median kept), default $BENCH_REPS or 3
  --thumb-concurrency <n>  parallel thumbnail requests / vipsthumbnail processes, default 4
  --nginx-workers <n>   nginx worker processes, default $BENCH_NGINX_WORKERS or 1 (our server is one process)
  --database <url>      run the server on PostgreSQL (postgres://user@host:port/db): the bench makes a
                        database of its own on that server and drops it after; default a SQLite file
  --out <file>          JSON results, default bench/results/latest.json
  --keep                keep the temp folder (for debugging)
  --strict              exit 1 when a row fails or errors
  -h, --help            this text

  BENCH_SERVER_ENTRY=<file> benchmarks another server entry instead of packages/server/dist/main.js.
  BENCH_SERVER_NODE_ARGS="<flags>" passes node flags to the server, e.g.
    "--cpu-prof --cpu-prof-dir=/tmp/prof" (a profile per server run, written when it stops).
  BENCH_SERVER_OUTPUT=<file> appends the server's stdout and stderr to a file (e.g. with
    BENCH_SERVER_NODE_ARGS=--trace-gc).
`;

/**
 * @typedef {object} Options
 * @property {Set<string>} rows
 * @property {number} scale
 * @property {number} durationMs
 * @property {number} connections
 * @property {number} reps
 * @property {number} thumbConcurrency
 * @property {number} nginxWorkers
 * @property {string | null} database
 * @property {string | null} out
 * @property {boolean} keep
 * @property {boolean} strict
 * @property {boolean} help
 */

/**
 * @param {string} name
 * @param {string | undefined} raw
 * @param {number} min
 * @param {number} max
 * @returns {number | undefined}
 */
function num(name, raw, min, max) {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`${name} must be a number in ${min}..${max}`);
  return n;
}

/**
 * @param {string | undefined} url
 * @returns {string | null}
 */
function database(url) {
  if (url === undefined) return null;
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error('--database must be a postgres:// URL');
  return url;
}

/**
 * @param {string[]} argv arguments after the script name
 * @param {NodeJS.ProcessEnv} env
 * @returns {Options}
 */
export function parseOptions(argv, env) {
  /** @type {Record<string, string | true>} */
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = /** @type {string} */ (argv[i]);
    if (arg === '-h' || arg === '--help') {
      flags.help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (name === 'keep' || name === 'strict') {
      flags[name] = true;
    } else if (eq !== -1) {
      flags[name] = arg.slice(eq + 1);
    } else {
      const value = argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      flags[name] = value;
    }
  }
  const known = [
    'help',
    'only',
    'scale',
    'duration',
    'connections',
    'reps',
    'thumb-concurrency',
    'nginx-workers',
  ];
  for (const name of Object.keys(flags)) {
    if (![...known, 'out', 'database', 'keep', 'strict'].includes(name))
      throw new Error(`unknown option --${name}`);
  }
  const str = (/** @type {string} */ name) => (typeof flags[name] === 'string' ? flags[name] : undefined);

  const scale = num('scale', str('scale') ?? env.BENCH_SCALE, 0.001, 10) ?? 1;
  const duration =
    num('duration', str('duration') ?? env.BENCH_DURATION, 0.5, 600) ?? Math.min(10, Math.max(2, 10 * scale));
  /** @type {Set<string>} */
  const rows = new Set();
  const only = str('only');
  if (only) {
    for (const id of only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const alias = ALIASES[id];
      if (alias) {
        for (const a of alias) rows.add(a);
      } else if (ROW_IDS.includes(id)) {
        rows.add(id);
      } else {
        throw new Error(`unknown row "${id}" (known: ${[...ROW_IDS, ...Object.keys(ALIASES)].join(', ')})`);
      }
    }
    rows.add('memory'); // free: it reads the server's peak RSS after the selected rows
  } else {
    for (const id of ROW_IDS) rows.add(id);
  }
  return {
    rows,
    scale,
    durationMs: Math.round(duration * 1000),
    connections: num('connections', str('connections') ?? env.BENCH_CONNECTIONS, 1, 1024) ?? 8,
    reps: Math.round(num('reps', str('reps') ?? env.BENCH_REPS, 1, 50) ?? 3),
    thumbConcurrency: Math.round(num('thumb-concurrency', str('thumb-concurrency'), 1, 64) ?? 4),
    nginxWorkers: Math.round(
      num('nginx-workers', str('nginx-workers') ?? env.BENCH_NGINX_WORKERS, 1, os.cpus().length * 4) ?? 1,
    ),
    database: database(str('database')),
    out: str('out') ?? null,
    keep: flags.keep === true,
    strict: flags.strict === true,
    help: flags.help === true,
  };
}
