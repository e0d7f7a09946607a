// Row 4: streaming a folder as zip (entries stored) and as tar.gz, ours vs `zip -r -0` and
// `tar czf`. Both sides' output is read by this process and discarded, so both pay for moving
// the bytes; the figure is tree bytes per second.
import { request } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { runToolOk, which } from '../lib/proc.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize, mibPerSecond } from '../lib/units.mjs';

/**
 * @typedef {object} Format
 * @property {'zip' | 'targz'} id
 * @property {string} label
 * @property {string[]} tools executables the reference needs
 * @property {(tree: string) => { cmd: string, args: string[], cwd: string }} reference
 * @property {string} referenceTool
 * @property {number} minRatioOut sanity bound: output bytes / tree bytes at least this
 */

/** @type {Format[]} */
const FORMATS = [
  {
    id: 'zip',
    label: 'zip',
    tools: ['zip'],
    reference: (tree) => ({ cmd: 'zip', args: ['-r', '-0', '-q', '-', '.'], cwd: tree }),
    referenceTool: 'zip -r -0',
    minRatioOut: 0.99, // stored entries: at least the input
  },
  {
    id: 'targz',
    label: 'tar.gz',
    tools: ['tar', 'gzip'],
    reference: (tree) => ({ cmd: 'tar', args: ['czf', '-', '-C', tree, '.'], cwd: tree }),
    referenceTool: 'tar czf',
    minRatioOut: 0.5, // 90 % of the tree is incompressible
  },
];

/** @type {import('../lib/context.mjs').Row} */
export const archiveRow = {
  ids: FORMATS.map((f) => f.id),
  async run(ctx) {
    const tree = await ctx.data.tree();
    const timeoutMs = Math.max(120_000, (tree.bytes / (1024 * 1024)) * 1000); // >= 1 MiB/s
    /** @type {import('../lib/report.mjs').RowResult[]} */
    const results = [];
    for (const format of FORMATS) {
      if (!ctx.opts.rows.has(format.id)) continue;
      /** @type {string[]} */
      const notes = [];
      const missing = format.tools.filter((t) => !which(t));
      const { reference, ours } = await measureBoth({
        reps: ctx.opts.reps,
        reference: async () => {
          if (missing.length) throw new Skipped(`${missing.join(', ')} not installed`);
          const { cmd, args, cwd } = format.reference(tree.abs);
          const run = await runToolOk(cmd, args, { cwd, timeoutMs });
          return {
            value: mibPerSecond(tree.bytes, run.seconds),
            unit: 'MiB/s',
            detail: `${fmtSize(run.stdoutBytes)} out in ${run.seconds.toFixed(2)} s`,
          };
        },
        ours: async () => {
          const server = await ctx.server();
          const url = `${server.base}/api/raw/${tree.rel}/?algo=${format.id}`;
          const r = await request(url, { headers: server.auth(), timeoutMs });
          checkEndpoint(r, `GET /api/raw?algo=${format.id}`);
          if (r.bytes < tree.bytes * format.minRatioOut) {
            throw new Error(`archive has only ${fmtSize(r.bytes)} for a ${fmtSize(tree.bytes)} tree`);
          }
          return {
            value: mibPerSecond(tree.bytes, r.totalMs / 1000),
            unit: 'MiB/s',
            detail: `${fmtSize(r.bytes)} out in ${(r.totalMs / 1000).toFixed(2)} s`,
          };
        },
      });
      results.push(
        evaluate({
          id: format.id,
          title: `${format.label} of ${fmtSize(tree.bytes)} tree`,
          target: { kind: 'min-ratio', value: 0.9 },
          ours,
          reference,
          referenceTool: format.referenceTool,
          notes,
        }),
      );
    }
    return results;
  },
};
