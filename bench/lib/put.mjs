// One upload of a whole file in one request, timed to the answer: the WebDAV PUT rows, nginx's
// PUT reference and our API's one-request upload all go through here, so every side pays the
// same client.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { loopbackUrl } from './http.mjs';
import { checkEndpoint } from './outcome.mjs';
import { fmtSize, mibPerSecond } from './units.mjs';

/**
 * A generous bound for moving `bytes` through an upload: 2 MiB/s is far below any sane result.
 * @param {number} bytes
 */
export const uploadTimeoutMs = (bytes) => Math.max(60_000, (bytes / (2 * 1024 * 1024)) * 1000);

/**
 * Sends a file's bytes as one request body with a Content-Length (what Finder, rclone, davfs2 and
 * curl -T send for a known size).
 * @param {{ url: string, method: string, file: string, bytes: number, headers: Record<string, string>, timeoutMs: number }} req
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, seconds: number }>}
 */
function sendFile({ url, method, file, bytes, headers, timeoutMs }) {
  const u = loopbackUrl(url);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      u,
      {
        method,
        agent: false,
        headers: { ...headers, 'Content-Length': String(bytes), 'Content-Type': 'application/octet-stream' },
      },
      (res) => {
        res.resume();
        res.once('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            seconds: (performance.now() - start) / 1000,
          });
        });
        res.once('error', reject);
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`${method} did not finish within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const source = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
    source.once('error', (err) => req.destroy(err));
    source.pipe(req);
  });
}

/**
 * Times `transfer` (which resolves with its seconds) writing `file`'s bytes to `stored`, and
 * refuses the result unless `stored` then holds every byte; `stored` is removed after.
 * @param {{ file: { bytes: number }, stored: string, what: string, note?: string }} target
 * @param {() => Promise<number>} transfer
 * @returns {Promise<import('./measure.mjs').Measure>}
 */
export async function storeThroughput({ file, stored, what, note }, transfer) {
  try {
    const seconds = await transfer();
    const size = fs.statSync(stored).size;
    if (size !== file.bytes) throw new Error(`${what} stored ${size} of ${file.bytes} bytes`);
    return {
      value: mibPerSecond(file.bytes, seconds),
      unit: 'MiB/s',
      detail: `${fmtSize(file.bytes)} in ${seconds.toFixed(2)} s${note ? `, ${note}` : ''}`,
    };
  } finally {
    fs.rmSync(stored, { force: true });
  }
}

/**
 * Uploads `file` in one request and measures it: refused unless the answer is one of `expected`
 * and `stored` (the file the upload must have made) holds every byte.
 * @param {{ url: string, method?: string, file: { abs: string, bytes: number }, stored: string,
 *   headers?: Record<string, string>, expected: number[], what: string }} upload
 */
export function uploadThroughput({ url, method = 'PUT', file, stored, headers = {}, expected, what }) {
  return storeThroughput({ file, stored, what }, async () => {
    const r = await sendFile({
      url,
      method,
      file: file.abs,
      bytes: file.bytes,
      headers,
      timeoutMs: uploadTimeoutMs(file.bytes),
    });
    checkEndpoint(r, what, expected);
    return r.seconds;
  });
}

/**
 * A PUT of `file` to the nginx reference's uploads location, stored as `name` in `uploads`.
 * @param {import('./nginx.mjs').Nginx} nginx
 * @param {{ rel: string, abs: string }} uploads
 * @param {{ abs: string, bytes: number }} file
 * @param {string} name
 */
export function nginxPut(nginx, uploads, file, name) {
  return uploadThroughput({
    url: `${nginx.base}/${uploads.rel}/${name}`,
    file,
    stored: path.join(uploads.abs, name),
    expected: [201, 204],
    what: 'nginx PUT',
  });
}
