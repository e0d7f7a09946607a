// Row 6: 256x256 thumbnails of the photos with an empty cache, ours (/api/preview/thumb) vs
// vipsthumbnail, both asked with the same parallelism (default 4; the server resizes
// --imageProcessors of them at once, one per core up to 4, and queues the rest).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from '../lib/http.mjs';
import { measureBoth } from '../lib/measure.mjs';
import { checkEndpoint, Skipped } from '../lib/outcome.mjs';
import { runToolOk, which } from '../lib/proc.mjs';
import { evaluate } from '../lib/report.mjs';

/**
 * Empties a folder without removing it (the server may hold it).
 * @param {string} dir
 */
function emptyDir(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

/** @type {import('../lib/context.mjs').Row} */
export const thumbsRow = {
  ids: ['thumbs'],
  async run(ctx) {
    const photos = await ctx.data.photos();
    const parallel = ctx.opts.thumbConcurrency;
    const vips = which('vipsthumbnail');
    const outDir = path.join(ctx.workDir, 'vips-out');
    /** @type {string[]} */
    const notes = [];
    const timeoutMs = Math.max(120_000, photos.names.length * 10_000);

    const { reference, ours } = await measureBoth({
      reps: ctx.opts.reps,
      reference: async () => {
        if (!vips) throw new Skipped('vipsthumbnail not installed');
        fs.mkdirSync(outDir, { recursive: true });
        emptyDir(outDir);
        /** @type {string[][]} */
        const slices = Array.from({ length: parallel }, () => []);
        photos.names.forEach((n, i) => slices[i % parallel]?.push(path.join(photos.abs, n)));
        const start = performance.now();
        await Promise.all(
          slices
            .filter((s) => s.length)
            .map((files) =>
              runToolOk(
                vips,
                ['--size', '256x256', '--smartcrop', 'centre', '-o', path.join(outDir, '%s.jpg'), ...files],
                {
                  timeoutMs,
                },
              ),
            ),
        );
        const seconds = (performance.now() - start) / 1000;
        const made = fs.readdirSync(outDir).length;
        if (made !== photos.names.length)
          throw new Error(`vipsthumbnail made ${made} of ${photos.names.length}`);
        return {
          value: photos.names.length / seconds,
          unit: 'img/s',
          detail: `${photos.names.length} in ${seconds.toFixed(2)} s, ${parallel} processes`,
        };
      },
      ours: async () => {
        const server = await ctx.server();
        emptyDir(server.cacheDir);
        const queue = [...photos.names];
        const originalSize = fs.statSync(path.join(photos.abs, photos.names[0] ?? '')).size;
        let bytes = 0;
        let done = 0;
        const start = performance.now();
        const worker = async () => {
          for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
            const url = `${server.base}/api/preview/thumb/${photos.rel}/${name}?inline=true`;
            let r;
            try {
              r = await request(url, { headers: server.auth(), timeoutMs });
              checkEndpoint(r, 'GET /api/preview/thumb');
            } catch (err) {
              queue.length = 0; // stop the other workers too
              throw err;
            }
            bytes += r.bytes;
            done++;
          }
        };
        await Promise.all(Array.from({ length: parallel }, worker));
        const seconds = (performance.now() - start) / 1000;
        const mean = bytes / done;
        if (mean >= originalSize * 0.5)
          notes.push(`thumbnails average ${Math.round(mean / 1024)} KiB: originals served?`);
        return {
          value: done / seconds,
          unit: 'img/s',
          detail: `${done} in ${seconds.toFixed(2)} s, ${parallel} parallel requests, ${Math.round(mean / 1024)} KiB each`,
        };
      },
    });
    return [
      evaluate({
        id: 'thumbs',
        title: `thumbnails of ${photos.names.length} photos`,
        target: { kind: 'min-ratio', value: 0.8 },
        ours,
        reference,
        referenceTool: 'vipsthumbnail',
        notes: [...new Set(notes)],
      }),
    ];
  },
};
