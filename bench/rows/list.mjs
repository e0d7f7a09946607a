// Row 1: requests/s listing a folder of 10,000 files, ours vs nginx's JSON autoindex.
import { loadTest, request } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { evaluate } from '../lib/report.mjs';

/** @type {import('../lib/context.mjs').Row} */
export const listRow = {
  ids: ['list'],
  async run(ctx) {
    const { opts } = ctx;
    const dir = await ctx.data.listing();
    /** @type {string[]} */
    const notes = [];

    /**
     * @param {string} url
     * @param {Record<string, string>} headers
     * @param {(body: unknown) => number} countItems
     * @param {string} what
     * @returns {Promise<import('../lib/measure.mjs').Measure>}
     */
    const measure = async (url, headers, countItems, what) => {
      const probe = await request(url, { headers, collect: true, timeoutMs: 60_000 });
      checkEndpoint(probe, what);
      const items = countItems(JSON.parse(probe.body?.toString() ?? 'null'));
      if (items !== dir.files) notes.push(`${what} listed ${items} of ${dir.files} entries`);
      const warmupMs = Math.min(2000, opts.durationMs / 5);
      const r = await loadTest(url, {
        headers,
        connections: opts.connections,
        durationMs: opts.durationMs,
        warmupMs,
      });
      if (r.errors > 0) notes.push(`${what}: ${r.errors} failed requests (first: ${r.firstError})`);
      if (r.requests === 0) throw new Error(`${what}: no successful request (${r.firstError})`);
      return {
        value: r.rps,
        unit: 'req/s',
        detail: `${r.requests} requests in ${r.seconds.toFixed(1)} s over ${opts.connections} connections, ${Math.round(r.meanBytes / 1024)} KiB each`,
      };
    };

    const { reference, ours } = await measureBoth({
      reps: 1,
      reference: async () => {
        const nginx = await ctx.nginx();
        if (!nginx) throw new Skipped('nginx not installed');
        return measure(
          `${nginx.base}/${dir.rel}/`,
          {},
          (body) => (Array.isArray(body) ? body.length : -1),
          'nginx autoindex',
        );
      },
      ours: async () => {
        const server = await ctx.server();
        return measure(
          `${server.base}/api/resources/${dir.rel}/`,
          server.auth(),
          (body) => {
            const items = /** @type {{ items?: unknown }} */ (body)?.items;
            return Array.isArray(items) ? items.length : -1;
          },
          'GET /api/resources',
        );
      },
    });
    return [
      evaluate({
        id: 'list',
        title: `list ${dir.files.toLocaleString('en-US')} files`,
        target: { kind: 'min-ratio', value: 0.8 },
        ours,
        reference,
        referenceTool: 'nginx autoindex json',
        notes,
      }),
    ];
  },
};
