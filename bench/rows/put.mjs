// Row "put": the big file in one plain HTTP request through our web API (POST /api/resources
// with a Content-Length, as a script or curl would send it) vs nginx taking the same PUT into the
// same folder.
import path from 'node:path';
import { measureBoth } from '../lib/measure.mjs';
import { Skipped } from '../lib/outcome.mjs';
import { nginxPut, uploadThroughput } from '../lib/put.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize } from '../lib/units.mjs';

/** @type {import('../lib/context.mjs').Row} */
export const putRow = {
  ids: ['put'],
  async run(ctx) {
    const file = await ctx.data.bigFile();
    const target = await ctx.data.uploads();
    const { reference, ours } = await measureBoth({
      reps: ctx.opts.reps,
      reference: async (i) => {
        const nginx = await ctx.nginx();
        if (!nginx) throw new Skipped('nginx not installed');
        return nginxPut(nginx, target, file, `nginx-put-${i}.bin`);
      },
      ours: async (i) => {
        const server = await ctx.server();
        const name = `put-${i}.bin`;
        return uploadThroughput({
          url: `${server.base}/api/resources/${target.rel}/${name}`,
          method: 'POST',
          file,
          stored: path.join(target.abs, name),
          headers: server.auth(),
          expected: [200],
          what: 'POST /api/resources',
        });
      },
    });
    return [
      evaluate({
        id: 'put',
        title: `one-request upload ${fmtSize(file.bytes)}`,
        target: { kind: 'min-ratio', value: 0.8 },
        ours,
        reference,
        referenceTool: 'nginx PUT, no fsync',
        notes: ['ours fsyncs the file before renaming it into place and answering; nginx does not'],
      }),
    ];
  },
};
