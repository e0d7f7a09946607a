// `node bench/server-cpu.mjs [options] name=dist/main.js[,VAR=value...] ...`: the server's CPU
// seconds per unit of work (utime + stime of its process from /proc/<pid>/stat, all threads), for
// two or more builds taking turns (the same build twice with different variables, such as
// `c=dist/main.js js=dist/main.js,FB_NATIVE=off`, compares two ways of one build). On a shared machine wall-clock throughput swings by 2× between runs while
// CPU per byte or per request moves much less, so this is how one build is compared with another.
//   --reps N        rounds (default 5); each round starts every build once, in alternating order
//   --kinds a,b     of: tus (1 GiB, 10 MiB chunks, as the upload row), put (1 GiB in one POST),
//                   list (listings of the 10,000-file folder), tusreq (1,024 PATCHes of 64 KiB),
//                   putreq (1,024 POSTs of 4 KiB), dav (GET /dav/ of the 1 GiB file), raw (the
//                   same through /api/raw), propfind (PROPFINDs of the 10,000-file folder,
//                   Depth 1, allprop, one at a time, as the dav-propfind row), search (searches
//                   of the 200,000-entry tree, as the search row), msearch (searches of the million tree, kept between runs as for
//                   the million row), mfirst (the first listing of the million tree's folder of
//                   100,000 files, in a server that has not listed it yet), mwarm (listings of
//                   it after that one, as the million row's warm listings); default tus,put,list
//   --list N        listings per round (default 1000)
//   --mwarm N       warm listings of the 100,000 files per round (default 3)
//   --propfind N    PROPFINDs per round (default 50)
//   --search N      searches per round (default 10); their median time to the first hit is
//                   printed too (wall clock: noise on a shared machine, a sanity check only)
//   --prof DIR      start each server with --cpu-prof, profiles in DIR/<name>-<round>
//   --args-NAME "F" node flags for build NAME only (e.g. the same build twice, once with
//                   --args-small "--max-semi-space-size=1"); they win over the server's defaults
//   --out FILE      every sample as JSON
// TMPDIR holds the data (as for `npm run bench`); results go to stdout, progress to stderr.
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as tus from 'tus-js-client';
import { cleanupAll, installCleanupHandlers, trackDir } from './lib/cleanup.mjs';
import { createDataset, sizesFor } from './lib/dataset.mjs';
import { request } from './lib/http.mjs';
import { procStatusKiB, startServer } from './lib/server.mjs';

const args = process.argv.slice(2);
/** @param {string} name @param {string} fallback */
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const reps = Number(option('reps', '5'));
const kinds = option('kinds', 'tus,put,list').split(',');
const listings = Number(option('list', '1000'));
const searches = Number(option('search', '10'));
const warmBig = Number(option('mwarm', '3'));
const propfinds = Number(option('propfind', '50'));
const profDir = option('prof', '');
const out = option('out', '');
const builds = args
  // name=path[,VAR=value...], unless it is the value of an option (an option's name has no "=")
  .filter((a, i) => /^\w[\w.-]*=/.test(a) && !/^--[^=]+$/.test(args[i - 1] ?? ''))
  .map((a) => {
    const name = a.slice(0, a.indexOf('='));
    const [entry, ...vars] = a.slice(name.length + 1).split(',');
    const env = Object.fromEntries(
      vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]),
    );
    return /** @type {[string, string, Record<string, string>]} */ ([name, entry ?? '', env]);
  });
if (builds.length === 0) {
  console.error(
    'usage: node bench/server-cpu.mjs [--reps N] [--kinds tus,put,list] name=path/to/main.js ...',
  );
  process.exit(2);
}
const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
/** Requests per round of the per-request kinds. */
const REQUESTS = 1024;
const log = (/** @type {string} */ msg) => console.error(`server-cpu: ${msg}`);

installCleanupHandlers();
const workRoot = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'fb-cpu-'));
trackDir(workRoot);
const root = path.join(workRoot, 'data');
const data = createDataset(root, sizesFor(1), log);
const uploading = kinds.some((k) => ['tus', 'put', 'tusreq', 'putreq'].includes(k));
const big =
  uploading || kinds.includes('dav') || kinds.includes('raw')
    ? await data.bigFile()
    : { abs: '', rel: '', bytes: 2 ** 30 };
const listing = kinds.includes('list') || kinds.includes('propfind') ? await data.listing() : undefined;
const searchTree = kinds.includes('search') ? await data.searchTree() : undefined;
const million = kinds.some((k) => ['msearch', 'mfirst', 'mwarm'].includes(k))
  ? await data.million()
  : undefined;
const uploads = await data.uploads();
const mid = path.join(workRoot, 'mid.bin');
if (uploading) fs.writeFileSync(mid, fs.readFileSync(big.abs).subarray(0, REQUESTS * 64 * 1024));
const small = path.join(workRoot, 'small.bin');
fs.writeFileSync(small, Buffer.alloc(20 * 1024 * 1024, 7));
const tiny = path.join(workRoot, 'tiny.bin');
fs.writeFileSync(tiny, Buffer.alloc(4096, 9));

/** @param {number} pid */
function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command's closing parenthesis start at field 3; utime and stime are 14 and 15
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) / TICKS, sys: Number(f[12]) / TICKS };
}

/** Read and write system calls so far: a run that took many more of them was disturbed. */
function callsOf(/** @type {number} */ pid) {
  const text = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (/** @type {string} */ name) => Number(new RegExp(`${name}: (\\d+)`).exec(text)?.[1] ?? 0);
  return { reads: field('syscr'), writes: field('syscw') };
}

/**
 * @param {string} file
 * @param {string} endpoint
 * @param {Record<string, string>} headers
 * @param {number} chunkSize
 * @returns {Promise<void>}
 */
function tusUpload(file, endpoint, headers, chunkSize) {
  return new Promise((resolve, reject) => {
    const source = fs.createReadStream(file);
    const upload = new tus.Upload(source, {
      endpoint,
      chunkSize,
      headers,
      retryDelays: null,
      storeFingerprintForResuming: false,
      metadata: { filename: path.basename(file) },
      onSuccess: () => (source.destroy(), resolve()),
      onError: (err) => (source.destroy(), reject(err)),
    });
    upload.start();
  });
}

/**
 * The file as the body of one `POST /api/resources{path}?override=true`.
 * @param {string} file
 * @param {string} url
 * @param {Record<string, string>} headers
 * @returns {Promise<void>}
 */
function postUpload(file, url, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-length': fs.statSync(file).size,
          'content-type': 'application/octet-stream',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`POST answered ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

/**
 * `count` listings over 4 keep-alive connections.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {number} count
 */
async function listMany(url, headers, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let left = count;
  const worker = async () => {
    while (left-- > 0) {
      const r = await request(url, { headers, agent });
      if (r.status !== 200) throw new Error(`listing answered ${r.status}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 4 }, worker));
  } finally {
    agent.destroy();
  }
}

/**
 * `count` searches one after the other, each answer read to its end.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {number} count
 * @param {number} hits
 * @returns {Promise<number[]>} the time to the first hit of each
 */
async function searchMany(url, headers, count, hits) {
  const firsts = [];
  for (let i = 0; i < count; i++) {
    // the first answer is kept and its hits counted, the others only timed
    const r = await request(url, { headers, lines: true, collect: i === 0, timeoutMs: 10 * 60_000 });
    if (r.status !== 200) throw new Error(`search answered ${r.status}`);
    const found = r.body
      ?.toString()
      .split('\n')
      .filter((l) => l !== '').length;
    if (found !== undefined && found !== hits) throw new Error(`search found ${found} of ${hits}`);
    firsts.push(r.firstLineMs ?? NaN);
  }
  return firsts;
}

const ALLPROP =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';

/**
 * `count` PROPFINDs of a folder one after the other on one connection, each answer read to its end.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {number} count
 * @param {number} responses expected `D:response` elements in each answer
 */
async function propfindMany(url, headers, count, responses) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < count; i++) {
      const r = await request(url, {
        method: 'PROPFIND',
        headers: { ...headers, Depth: '1', 'Content-Type': 'application/xml; charset=utf-8' },
        body: ALLPROP,
        agent,
        // the first answer is checked, the others only read
        collect: i === 0,
        timeoutMs: 60_000,
      });
      if (r.status !== 207) throw new Error(`PROPFIND answered ${r.status}`);
      const found = r.body?.toString().match(/<\/D:response>/g)?.length;
      if (found !== undefined && found !== responses)
        throw new Error(`PROPFIND answered ${found} of ${responses} responses`);
    }
  } finally {
    agent.destroy();
  }
}

const UNITS = {
  tus: 's/GiB',
  put: 's/GiB',
  dav: 's/GiB',
  raw: 's/GiB',
  list: 'ms per 100',
  propfind: 'ms/request',
  tusreq: 'ms/request',
  putreq: 'ms/request',
  search: 'ms/search',
  msearch: 'ms/search',
  mfirst: 'ms/listing',
  mwarm: 'ms/listing',
};
const GiB = big.bytes / 2 ** 30;
/**
 * @param {number[]} values
 * @returns {number}
 */
const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const at = (/** @type {number} */ i) => s[i] ?? NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? at(m) : (at(m - 1) + at(m)) / 2;
};
/** @type {Record<string, Record<string, { cpu: number, user: number, reads: number, writes: number, firstMs: number }[]>>} */
const samples = {};
for (let rep = 0; rep < reps; rep++) {
  for (const [name, entry, env] of rep % 2 === 0 ? builds : [...builds].reverse()) {
    const workDir = fs.mkdtempSync(path.join(workRoot, `${name}-`));
    const nodeArgs = [
      ...option(`args-${name}`, '').split(/\s+/).filter(Boolean),
      ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profDir, `${name}-${rep}`)}`] : []),
    ];
    const server = await startServer({ entry, workDir, dataRoot: root, log: () => undefined, nodeArgs, env });
    const auth = server.auth();
    const at = (/** @type {string} */ p) => `${server.base}${p}`;
    const target = (/** @type {string} */ api, /** @type {string} */ name) =>
      at(`/api/${api}/${uploads.rel}/${name}?override=true`);
    try {
      // each path once before measuring, so that every build is measured with its hot code compiled
      if (uploading) {
        await tusUpload(small, target('tus', 'warm-tus.bin'), auth, 10 * 1024 * 1024);
        await postUpload(small, target('resources', 'warm-post.bin'), auth);
      }
      if (listing) await listMany(at(`/api/resources/${listing.rel}/`), auth, 50);
      const searchUrl = (/** @type {{ rel: string }} */ tree) => at(`/api/search/${tree.rel}/?query=needle`);
      if (searchTree) await searchMany(searchUrl(searchTree), auth, 2, searchTree.hits);
      if (million && kinds.includes('msearch')) await searchMany(searchUrl(million), auth, 1, million.hits);
      // The listing code compiled on a small folder: the big one stays unlisted for mfirst.
      if (million) await listMany(at(`/api/resources/${million.smallRel}/`), auth, 50);
      // mwarm alone: the big folder is listed once first, so every measured listing is a warm one.
      if (million && kinds.includes('mwarm') && !kinds.includes('mfirst')) {
        const r = await request(at(`/api/resources/${million.bigRel}/`), {
          headers: auth,
          timeoutMs: 10 * 60_000,
        });
        if (r.status !== 200) throw new Error(`big listing answered ${r.status}`);
      }
      const propfindUrl = listing ? at(`/dav/${listing.rel}/`) : '';
      if (kinds.includes('propfind') && listing)
        await propfindMany(propfindUrl, server.basic(), 5, listing.files + 1);
      // WebDAV's first request checks the password with bcrypt; later ones find it remembered.
      if (kinds.includes('dav'))
        await request(at(`/dav/${big.rel}`), { method: 'HEAD', headers: server.basic() });
      for (const kind of kinds) {
        const cpu0 = cpuOf(server.pid);
        const calls0 = callsOf(server.pid);
        const t0 = performance.now();
        /** @type {number[]} */
        let firsts = [];
        if (kind === 'tus') await tusUpload(big.abs, target('tus', 't.bin'), auth, 10 * 1024 * 1024);
        else if (kind === 'put') await postUpload(big.abs, target('resources', 'p.bin'), auth);
        else if (kind === 'tusreq') await tusUpload(mid, target('tus', 't.bin'), auth, 64 * 1024);
        else if (kind === 'putreq') {
          for (let i = 0; i < REQUESTS; i++) await postUpload(tiny, target('resources', 'p.bin'), auth);
        } else if (kind === 'dav' || kind === 'raw') {
          const url = kind === 'dav' ? at(`/dav/${big.rel}`) : at(`/api/raw/${big.rel}`);
          const r = await request(url, { headers: kind === 'dav' ? server.basic() : auth });
          if (r.bytes !== big.bytes) throw new Error(`${kind} GET sent ${r.bytes} of ${big.bytes} bytes`);
        } else if (kind === 'list' && listing) {
          await listMany(at(`/api/resources/${listing.rel}/`), auth, listings);
        } else if (kind === 'propfind' && listing) {
          await propfindMany(propfindUrl, server.basic(), propfinds, listing.files + 1);
        } else if (kind === 'search' && searchTree) {
          firsts = await searchMany(searchUrl(searchTree), auth, searches, searchTree.hits);
        } else if ((kind === 'mfirst' || kind === 'mwarm') && million) {
          const url = at(`/api/resources/${million.bigRel}/`);
          for (let i = 0; i < (kind === 'mfirst' ? 1 : warmBig); i++) {
            const r = await request(url, { headers: auth, timeoutMs: 10 * 60_000 });
            if (r.status !== 200) throw new Error(`big listing answered ${r.status}`);
          }
        } else if (kind === 'msearch' && million) {
          firsts = await searchMany(searchUrl(million), auth, searches, million.hits);
        } else throw new Error(`unknown kind ${kind}`);
        const seconds = (performance.now() - t0) / 1000;
        const cpu1 = cpuOf(server.pid);
        const calls1 = callsOf(server.pid);
        const used = cpu1.user + cpu1.sys - cpu0.user - cpu0.sys;
        const per =
          kind === 'list'
            ? (1000 * 100) / listings
            : kind === 'propfind'
              ? 1000 / propfinds
              : kind.endsWith('req')
                ? 1000 / REQUESTS
                : kind.endsWith('search')
                  ? 1000 / searches
                  : kind === 'mfirst'
                    ? 1000
                    : kind === 'mwarm'
                      ? 1000 / warmBig
                      : 1 / GiB;
        const sample = {
          firstMs: firsts.length > 0 ? median(firsts) : NaN,
          cpu: used * per,
          user: (cpu1.user - cpu0.user) * per,
          reads: calls1.reads - calls0.reads,
          writes: calls1.writes - calls0.writes,
        };
        ((samples[name] ??= {})[kind] ??= []).push(sample);
        log(
          `round ${rep} ${name} ${kind}: ${sample.cpu.toFixed(3)} ${UNITS[/** @type {keyof UNITS} */ (kind)]} ` +
            `(user ${sample.user.toFixed(3)}; ${sample.reads} reads, ${sample.writes} writes; wall ${seconds.toFixed(1)} s` +
            `${firsts.length > 0 ? `; first hit ${sample.firstMs.toFixed(0)} ms` : ''}` +
            `; server peak RSS so far ${((procStatusKiB(server.pid, 'VmHWM') ?? 0) / 1024).toFixed(0)} MB)`,
        );
        for (const f of ['t.bin', 'p.bin']) fs.rmSync(path.join(uploads.abs, f), { force: true });
      }
    } finally {
      await server.stop();
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  }
}

console.log('build\tkind\treps\tmedian\trange\tuser median\tunit\tfirst hit ms');
for (const [name, byKind] of Object.entries(samples)) {
  for (const [kind, list] of Object.entries(byKind)) {
    const cpu = list.map((s) => s.cpu);
    console.log(
      [
        name,
        kind,
        list.length,
        median(cpu).toFixed(3),
        `${Math.min(...cpu).toFixed(3)}–${Math.max(...cpu).toFixed(3)}`,
        median(list.map((s) => s.user)).toFixed(3),
        UNITS[/** @type {keyof UNITS} */ (kind)],
        kind.endsWith('search') ? median(list.map((s) => s.firstMs)).toFixed(0) : '',
      ].join('\t'),
    );
  }
}
if (out) fs.writeFileSync(out, JSON.stringify(samples, null, 1));
await cleanupAll();
