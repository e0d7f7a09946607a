// Row 3: resumable upload of the big file with tus-js-client (10 MiB chunks), ours vs nginx taking
// the same bytes in one PUT into the same folder; writing them to the same disk with dd (10 MiB
// blocks, fsync at the end) is shown beside it.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import * as tus from 'tus-js-client';
import { measureBoth } from '../lib/measure.mjs';
import { Skipped, Unavailable } from '../lib/outcome.mjs';
import { runToolOk, which } from '../lib/proc.mjs';
import { nginxPut, storeThroughput, uploadTimeoutMs } from '../lib/put.mjs';
import { evaluate } from '../lib/report.mjs';
import { fmtSize } from '../lib/units.mjs';

const CHUNK = 10 * 1024 * 1024;

/**
 * Uploads `file` to `endpoint` with tus-js-client; resolves with the elapsed seconds.
 * @param {string} file
 * @param {string} endpoint
 * @param {Record<string, string>} headers
 * @param {number} timeoutMs
 * @returns {Promise<number>}
 */
function tusUpload(file, endpoint, headers, timeoutMs) {
  return new Promise((resolve, reject) => {
    const source = fs.createReadStream(file);
    const start = performance.now();
    const upload = new tus.Upload(source, {
      endpoint,
      chunkSize: CHUNK,
      headers,
      retryDelays: null, // a failure is a result, not something to hide
      storeFingerprintForResuming: false,
      metadata: { filename: path.basename(file) },
      onSuccess: () => {
        finish();
        resolve((performance.now() - start) / 1000);
      },
      onError: (err) => {
        finish();
        const status = /** @type {{ originalResponse?: { getStatus(): number } | null }} */ (
          err
        ).originalResponse?.getStatus();
        if (status === 404 || status === 405 || status === 501) reject(new Unavailable(String(status)));
        else reject(err);
      },
    });
    const timer = setTimeout(() => {
      upload.abort(false).catch(() => undefined);
      finish();
      reject(new Error(`tus upload did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    function finish() {
      clearTimeout(timer);
      source.destroy();
    }
    upload.start();
  });
}

/** @type {import('../lib/context.mjs').Row} */
export const uploadRow = {
  ids: ['upload'],
  async run(ctx) {
    const file = await ctx.data.bigFile();
    const target = await ctx.data.uploads();
    const timeoutMs = uploadTimeoutMs(file.bytes);
    const dd = which('dd');

    const { reference, second, ours } = await measureBoth({
      reps: ctx.opts.reps,
      reference: async (i) => {
        const nginx = await ctx.nginx();
        if (!nginx) throw new Skipped('nginx not installed');
        return nginxPut(nginx, target, file, `nginx-${i}.bin`);
      },
      second: async (i) => {
        if (!dd) throw new Skipped('dd not installed');
        const out = path.join(target.abs, `dd-${i}.bin`);
        return storeThroughput({ file, stored: out, what: 'dd' }, async () => {
          const args = [`if=${file.abs}`, `of=${out}`, 'bs=10M', 'conv=fsync', 'status=none'];
          return (await runToolOk(dd, args, { timeoutMs })).seconds;
        });
      },
      ours: async (i) => {
        const server = await ctx.server();
        const name = `tus-${i}.bin`;
        const endpoint = `${server.base}/api/tus/${target.rel}/${name}?override=false`;
        const note = `${Math.ceil(file.bytes / CHUNK)} chunks`;
        return storeThroughput({ file, stored: path.join(target.abs, name), what: 'tus', note }, () =>
          tusUpload(file.abs, endpoint, server.auth(), timeoutMs),
        );
      },
    });
    return [
      evaluate({
        id: 'upload',
        title: `tus upload ${fmtSize(file.bytes)}`,
        target: { kind: 'min-ratio', value: 0.8 },
        ours,
        reference,
        referenceTool: 'nginx PUT, no fsync',
        second,
        secondTool: 'dd bs=10M conv=fsync',
        notes: ['ours fsyncs every chunk before answering its offset; nginx does not fsync'],
      }),
    ];
  },
};
