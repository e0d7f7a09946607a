// Row 8: a tree of a million entries with one folder of 100,000 files. The big folder's first
// and warm listing against nginx's JSON autoindex, the search of the whole tree against `find`
// (time to the first and to the last hit), the server's memory meanwhile, and the latency of a
// small listing asked again and again while the server does the big work (it must stay
// responsive: one process serves everybody).
import { clearInterval, setInterval } from 'node:timers';
import { procStatusKiB } from '../lib/server.mjs';
import { request } from '../lib/http.mjs';
import { measureBoth, medianExtra } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { runToolOk, which } from '../lib/proc.mjs';
import { evaluate } from '../lib/report.mjs';

/** @param {number[]} values @param {number} q */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** @type {import('../lib/context.mjs').Row} */
export const millionRow = {
  ids: ['million'],
  async run(ctx) {
    const tree = await ctx.data.million();
    const server = await ctx.server();
    const nginx = await ctx.nginx();
    const find = which('find');
    const timeoutMs = 10 * 60_000;
    /** @type {string[]} */
    const notes = [];

    // The server's resident memory, sampled through the whole row.
    let peakKiB = 0;
    const sampler = setInterval(() => {
      peakKiB = Math.max(peakKiB, procStatusKiB(server.pid, 'VmRSS') ?? 0);
    }, 50);

    // Small listings, one after the other, while `work` runs on our server.
    /** @type {number[]} */
    const latencies = [];
    /** @template T @param {() => Promise<T>} work @returns {Promise<T>} */
    const probed = async (work) => {
      let done = false;
      const probe = (async () => {
        while (!done) {
          const r = await request(`${server.base}/api/resources/${tree.smallRel}/`, {
            headers: server.auth(),
            timeoutMs: 60_000,
          });
          if (r.status !== 200) throw new Error(`small listing answered ${r.status}`);
          if (!done) latencies.push(r.totalMs);
        }
      })();
      try {
        return await work();
      } finally {
        done = true;
        await probe;
      }
    };

    /** @param {string} url @param {Record<string, string>} headers @param {(b: unknown) => number} count @param {string} what */
    const listOnce = async (url, headers, count, what) => {
      const r = await request(url, { headers, collect: true, timeoutMs });
      checkEndpoint(r, what);
      const items = count(JSON.parse(r.body?.toString() ?? 'null'));
      if (items !== tree.bigFiles) notes.push(`${what} listed ${items} of ${tree.bigFiles} entries`);
      return { value: r.totalMs, unit: 'ms', detail: `${Math.round(r.bytes / 1024)} KiB` };
    };
    const oursList = () =>
      listOnce(
        `${server.base}/api/resources/${tree.bigRel}/`,
        server.auth(),
        (b) => {
          const items = /** @type {{ items?: unknown }} */ (b)?.items;
          return Array.isArray(items) ? items.length : -1;
        },
        'GET /api/resources',
      );
    const nginxList = () => {
      if (!nginx) throw new Skipped('nginx not installed');
      return listOnce(
        `${nginx.base}/${tree.bigRel}/`,
        {},
        (b) => (Array.isArray(b) ? b.length : -1),
        'nginx autoindex',
      );
    };

    try {
      // First listing: nothing of the folder in the server's caches (the kernel's are warm for
      // both, from the generation or the previous run).
      const first = await measureBoth({
        reps: 1,
        reference: nginxList,
        ours: () => probed(oursList),
      });
      const warm = await measureBoth({
        reps: ctx.opts.reps,
        reference: nginxList,
        ours: () => probed(oursList),
      });
      const search = await measureBoth({
        reps: ctx.opts.reps,
        reference: async () => {
          if (!find) throw new Skipped('find not installed');
          const run = await runToolOk(find, [tree.abs, '-iname', '*needle*'], {
            countLines: true,
            timeoutMs,
          });
          if (run.lines !== tree.hits) notes.push(`find reported ${run.lines} hits, expected ${tree.hits}`);
          return {
            value: run.lastLineMs ?? run.seconds * 1000,
            unit: 'ms',
            detail: `${run.lines} hits`,
            extra: { firstLineMs: run.firstLineMs },
          };
        },
        ours: () =>
          probed(async () => {
            const url = `${server.base}/api/search/${tree.rel}/?query=needle`;
            const r = await request(url, { headers: server.auth(), collect: true, lines: true, timeoutMs });
            checkEndpoint(r, 'GET /api/search');
            const lines = (r.body?.toString() ?? '').split('\n').filter((l) => l.trim() !== '');
            if (lines.length !== tree.hits)
              notes.push(`GET /api/search returned ${lines.length} hits, expected ${tree.hits}`);
            return {
              value: r.lastLineMs ?? r.totalMs,
              unit: 'ms',
              detail: `${lines.length} hits, answer complete at ${Math.round(r.totalMs)} ms`,
              extra: { firstLineMs: r.firstLineMs },
            };
          }),
      });

      const label = `${tree.entries.toLocaleString('en-US')} entries`;
      const big = `${tree.bigFiles.toLocaleString('en-US')} files`;
      /** @param {import('../lib/measure.mjs').Side} side */
      const firstHit = (side) => {
        if (side instanceof Error) return side;
        const ms = medianExtra(side, 'firstLineMs');
        return ms === null
          ? new Error('no result line')
          : { value: ms, unit: 'ms', samples: [ms], measures: [{ value: ms, unit: 'ms' }] };
      };
      const p95 = quantile(latencies, 0.95);
      const responsive = latencies.length
        ? {
            value: p95,
            unit: 'ms',
            detail: `${latencies.length} listings of ${tree.smallFiles} files: median ${quantile(latencies, 0.5).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
            samples: [p95],
            measures: [{ value: p95, unit: 'ms' }],
          }
        : new Error('no small listing completed');
      const memory = { value: peakKiB / 1024, unit: 'MB', samples: [peakKiB / 1024], measures: [] };
      // Times: lower is better, so a listing "at least 0.8x nginx's speed" is a time ratio of 1.25.
      return [
        evaluate({
          id: 'million',
          title: `million: first listing of ${big}`,
          target: { kind: 'max-ratio', value: 1.25 },
          ours: first.ours,
          reference: first.reference,
          referenceTool: 'nginx autoindex json',
          notes: [...new Set(notes)],
        }),
        evaluate({
          id: 'million',
          title: `million: warm listing of ${big}`,
          target: { kind: 'max-ratio', value: 1.25 },
          ours: warm.ours,
          reference: warm.reference,
          referenceTool: 'nginx autoindex json',
        }),
        evaluate({
          id: 'million',
          title: `million: search ${label}, first hit`,
          target: { kind: 'max-value', value: 100, unit: 'ms' },
          ours: firstHit(search.ours),
          reference: firstHit(search.reference),
          referenceTool: 'find -iname',
        }),
        evaluate({
          id: 'million',
          title: `million: search ${label}, last hit`,
          target: { kind: 'max-ratio', value: 1.0 },
          ours: search.ours,
          reference: search.reference,
          referenceTool: 'find -iname',
        }),
        evaluate({
          id: 'million',
          title: 'million: small listing meanwhile, p95',
          target: { kind: 'max-value', value: 100, unit: 'ms' },
          ours: responsive,
        }),
        evaluate({
          id: 'million',
          title: 'million: server peak RSS in the row',
          target: { kind: 'max-value', value: 200, unit: 'MB' },
          ours: memory,
        }),
      ];
    } finally {
      clearInterval(sampler);
    }
  },
};
