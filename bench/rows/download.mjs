// Row 2: throughput of one download of the big file, ours (/api/raw) vs nginx sendfile.
import { request } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize, mibPerSecond } from '../lib/units.mjs';

/** @type {import('../lib/context.mjs').Row} */
export const downloadRow = {
  ids: ['download'],
  async run(ctx) {
    const file = await ctx.data.bigFile();

    /**
     * @param {string} url
     * @param {Record<string, string>} headers
     * @param {string} what
     * @returns {Promise<import('../lib/measure.mjs').Measure>}
     */
    const download = async (url, headers, what) => {
      const r = await request(url, { headers });
      checkEndpoint(r, what);
      if (r.bytes !== file.bytes) throw new Error(`${what} sent ${r.bytes} of ${file.bytes} bytes`);
      return {
        value: mibPerSecond(r.bytes, r.totalMs / 1000),
        unit: 'MiB/s',
        detail: `${fmtSize(r.bytes)} in ${(r.totalMs / 1000).toFixed(2)} s`,
      };
    };

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
