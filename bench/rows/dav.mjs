// Rows "dav-*": WebDAV against Apache httpd's mod_dav + mod_dav_fs serving the same folder, with
// the same client and the same requests: PROPFIND Depth 1 of the listing folder (allprop), and
// a PUT and a GET of the big file.
import path from 'node:path';
import { downloadThroughput, loadTest, request } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { uploadThroughput } from '../lib/put.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize } from '../lib/units.mjs';

const ALLPROP =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';

/** `D:response` elements in a multistatus, whatever prefix the server gives the DAV namespace. */
const countResponses = (/** @type {string} */ xml) =>
  (xml.match(/<\/(?:[A-Za-z][\w.-]*:)?response>/g) ?? []).length;

/** @type {import('../lib/context.mjs').Row} */
export const davRow = {
  ids: ['dav-propfind', 'dav-put', 'dav-get'],
  async run(ctx) {
    const { opts } = ctx;
    /** @type {import('../lib/report.mjs').RowResult[]} */
    const results = [];
    const apache = async () => {
      const a = await ctx.apache();
      if (!a) throw new Skipped('apache2 with mod_dav_fs not installed');
      return a;
    };
    const tool = async () => `${(await ctx.apache())?.version ?? 'Apache'} mod_dav_fs`;

    if (opts.rows.has('dav-propfind')) {
      const dir = await ctx.data.listing();
      /** @type {string[]} */
      const notes = [];
      /**
       * @param {string} url
       * @param {Record<string, string>} auth
       * @param {string} what
       * @returns {Promise<import('../lib/measure.mjs').Measure>}
       */
      const measure = async (url, auth, what) => {
        const headers = { ...auth, Depth: '1', 'Content-Type': 'application/xml; charset=utf-8' };
        const probe = await request(url, {
          method: 'PROPFIND',
          headers,
          body: ALLPROP,
          collect: true,
          timeoutMs: 60_000,
        });
        checkEndpoint(probe, what, [207]);
        const entries = countResponses(probe.body?.toString() ?? '');
        if (entries !== dir.files + 1)
          notes.push(`${what} answered ${entries} of ${dir.files + 1} responses`);
        const r = await loadTest(url, {
          method: 'PROPFIND',
          headers,
          body: ALLPROP,
          okStatus: 207,
          // One client waiting for each answer: the time of one PROPFIND, as a file manager opening
          // the folder sees it (more connections would measure Apache's threads against one process).
          connections: 1,
          durationMs: opts.durationMs,
          warmupMs: Math.min(2000, opts.durationMs / 5),
        });
        if (r.errors > 0) notes.push(`${what}: ${r.errors} failed requests (first: ${r.firstError})`);
        if (r.requests === 0) throw new Error(`${what}: no successful request (${r.firstError})`);
        return {
          value: r.rps,
          unit: 'req/s',
          detail: `${r.requests} requests in ${r.seconds.toFixed(1)} s, ${((r.seconds * 1000) / r.requests).toFixed(0)} ms and ${fmtSize(r.meanBytes)} each`,
        };
      };
      const { reference, ours } = await measureBoth({
        reps: 1,
        reference: async () => measure(`${(await apache()).base}/${dir.rel}/`, {}, 'Apache PROPFIND'),
        ours: async () => {
          const server = await ctx.server();
          return measure(`${server.base}/dav/${dir.rel}/`, server.basic(), 'PROPFIND /dav');
        },
      });
      results.push(
        evaluate({
          id: 'dav-propfind',
          title: `WebDAV PROPFIND ${dir.files.toLocaleString('en-US')} files`,
          target: { kind: 'min-ratio', value: 1.0 },
          ours,
          reference,
          referenceTool: `${await tool()}, allprop, Depth 1`,
          notes,
        }),
      );
    }

    if (opts.rows.has('dav-put')) {
      const file = await ctx.data.bigFile();
      const target = await ctx.data.uploads();
      /**
       * @param {string} base
       * @param {Record<string, string>} headers
       * @param {string} name
       * @param {string} what
       */
      const put = (base, headers, name, what) =>
        uploadThroughput({
          url: `${base}/${target.rel}/${name}`,
          file,
          stored: path.join(target.abs, name),
          headers,
          expected: [201, 204],
          what,
        });
      const { reference, ours } = await measureBoth({
        reps: opts.reps,
        reference: async (i) => put((await apache()).base, {}, `dav-apache-${i}.bin`, 'Apache PUT'),
        ours: async (i) => {
          const server = await ctx.server();
          return put(`${server.base}/dav`, server.basic(), `dav-ours-${i}.bin`, 'PUT /dav');
        },
      });
      results.push(
        evaluate({
          id: 'dav-put',
          title: `WebDAV PUT ${fmtSize(file.bytes)}`,
          target: { kind: 'min-ratio', value: 0.8 },
          ours,
          reference,
          referenceTool: `${await tool()} (no fsync)`,
          notes: ['ours fsyncs the file before renaming it into place; Apache does not'],
        }),
      );
    }

    if (opts.rows.has('dav-get')) {
      const file = await ctx.data.bigFile();
      /** @type {(url: string, headers: Record<string, string>, what: string) => Promise<import('../lib/measure.mjs').Measure>} */
      const get = (url, headers, what) => downloadThroughput(url, headers, what, file.bytes);
      const { reference, ours } = await measureBoth({
        reps: opts.reps,
        warmup: true,
        reference: async () => get(`${(await apache()).base}/${file.rel}`, {}, 'Apache GET'),
        ours: async () => {
          const server = await ctx.server();
          return get(`${server.base}/dav/${file.rel}`, server.basic(), 'GET /dav');
        },
      });
      results.push(
        evaluate({
          id: 'dav-get',
          title: `WebDAV GET ${fmtSize(file.bytes)}`,
          target: { kind: 'min-ratio', value: 0.8 },
          ours,
          reference,
          referenceTool: await tool(),
        }),
      );
    }
    return results;
  },
};
