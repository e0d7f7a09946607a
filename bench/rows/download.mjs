// Row 2: throughput of one download of the big file, ours (/api/raw) vs nginx sendfile.
import { downloadThroughput } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { Skipped } from '../lib/outcome.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize } from '../lib/units.mjs';

/** @type {import('../lib/context.mjs').Row} */
export const downloadRow = {
  ids: ['download'],
  async run(ctx) {
    const file = await ctx.data.bigFile();

    /** @type {(url: string, headers: Record<string, string>, what: string) => Promise<import('../lib/measure.mjs').Measure>} */
    const download = (url, headers, what) => downloadThroughput(url, headers, what, file.bytes);

    const { reference, ours } = await measureBoth({
      reps: ctx.opts.reps,
      warmup: true,
      reference: async () => {
        const nginx = await ctx.nginx();
        if (!nginx) throw new Skipped('nginx not installed');
        return download(`${nginx.base}/${file.rel}`, {}, 'nginx');
      },
      ours: async () => {
        const server = await ctx.server();
        return download(`${server.base}/api/raw/${file.rel}`, server.auth(), 'GET /api/raw');
      },
    });
    return [
      evaluate({
        id: 'download',
        title: `download ${fmtSize(file.bytes)}`,
        target: { kind: 'min-ratio', value: 0.9 },
        ours,
        reference,
        referenceTool: 'nginx sendfile',
      }),
    ];
  },
};
