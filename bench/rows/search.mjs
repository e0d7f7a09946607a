// Row 5: name search in a 200,000-file tree, ours (streamed JSON Lines) vs `find -iname`;
// total time, and time to the first streamed result.
import { request } from '../lib/http.mjs';
import { measureBoth, medianExtra } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { runToolOk, which } from '../lib/proc.mjs';
import { evaluate } from '../lib/report.mjs';

/** @type {import('../lib/context.mjs').Row} */
export const searchRow = {
  ids: ['search'],
  async run(ctx) {
    const tree = await ctx.data.searchTree();
    const find = which('find');
    /** @type {string[]} */
    const notes = [];
    const timeoutMs = 10 * 60_000;

    const { reference, ours } = await measureBoth({
      reps: ctx.opts.reps,
      warmup: true, // the first walk warms the dentry cache for both
      reference: async () => {
        if (!find) throw new Skipped('find not installed');
        const run = await runToolOk(find, [tree.abs, '-iname', `*${tree.term}*`], {
          countLines: true,
          timeoutMs,
        });
        if (run.lines !== tree.hits) notes.push(`find reported ${run.lines} hits, expected ${tree.hits}`);
        return {
          value: run.seconds,
          unit: 's',
          detail: `${run.lines} hits`,
          extra: { firstLineMs: run.firstLineMs },
        };
      },
      ours: async () => {
        const server = await ctx.server();
        const url = `${server.base}/api/search/${tree.rel}/?query=${encodeURIComponent(tree.term)}`;
        const r = await request(url, { headers: server.auth(), collect: true, lines: true, timeoutMs });
        checkEndpoint(r, 'GET /api/search');
        const lines = (r.body?.toString() ?? '').split('\n').filter((l) => l.trim() !== '');
        if (lines.some((l) => !l.startsWith('{'))) throw new Error(`unexpected search output: ${lines[0]}`);
        if (lines.length !== tree.hits)
          notes.push(`GET /api/search returned ${lines.length} hits, expected ${tree.hits}`);
        return {
          value: r.totalMs / 1000,
          unit: 's',
          detail: `${lines.length} hits`,
          extra: { firstLineMs: r.firstLineMs },
        };
      },
    });

    const title = `search ${tree.entries.toLocaleString('en-US')} entries`;
    /** @param {import('../lib/measure.mjs').Side} side */
    const firstLine = (side) => {
      if (side instanceof Error) return side;
      const ms = medianExtra(side, 'firstLineMs');
      return ms === null
        ? new Error('no result line')
        : { value: ms, unit: 'ms', samples: [ms], measures: [{ value: ms, unit: 'ms' }] };
    };
    return [
      evaluate({
        id: 'search',
        title: `${title}: total`,
        target: { kind: 'max-ratio', value: 1.0 },
        ours,
        reference,
        referenceTool: 'find -iname',
        notes: [...new Set(notes)],
      }),
      evaluate({
        id: 'search-first',
        title: `${title}: first result`,
        target: { kind: 'max-value', value: 100, unit: 'ms' },
        ours: firstLine(ours),
        reference: firstLine(reference),
        referenceTool: 'find -iname',
      }),
    ];
  },
};
