// Load generation with node:http only: single requests that count (or collect) the body, and a
// fixed-duration, fixed-concurrency keep-alive load loop. Only 127.0.0.1 is ever targeted.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { checkEndpoint } from './outcome.mjs';
import { fmtSize, mibPerSecond } from './units.mjs';

/**
 * @typedef {object} Reply
 * @property {number} status
 * @property {import('node:http').IncomingHttpHeaders} headers
 * @property {number} bytes body length
 * @property {number} ttfbMs time to the response headers
 * @property {number | null} firstLineMs time to the first body byte that completes a non-empty line
 * @property {number | null} lastLineMs time to the last body chunk that completes a line (when lines)
 * @property {number} totalMs time to the end of the body
 * @property {Buffer | null} body the body when collect was set
 */

/**
 * @typedef {object} RequestOptions
 * @property {string} [method]
 * @property {Record<string, string>} [headers]
 * @property {string | Buffer} [body]
 * @property {http.Agent | false} [agent]
 * @property {boolean} [collect] keep the body (only for small answers)
 * @property {boolean} [lines] watch for the first non-empty line (JSON Lines answers)
 * @property {number} [timeoutMs] hard limit for the whole exchange
 */

/**
 * Refuses anything that is not a loopback URL, so a typo can never load someone else's host.
 * @param {string} url
 * @returns {URL}
 */
export function loopbackUrl(url) {
  const u = new URL(url);
  if (u.protocol !== 'http:' || (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost')) {
    throw new Error(`bench only targets http://127.0.0.1, refused ${url}`);
  }
  return u;
}

/**
 * One HTTP exchange; the body is consumed (counted) and optionally collected.
 * @param {string} url
 * @param {RequestOptions} [options]
 * @returns {Promise<Reply>}
 */
export function request(url, options = {}) {
  const { method = 'GET', headers = {}, body, agent = false, collect = false, lines = false } = options;
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  const u = loopbackUrl(url);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(u, { method, headers, agent }, (res) => {
      const ttfbMs = performance.now() - start;
      let bytes = 0;
      /** @type {number | null} */
      let firstLineMs = null;
      /** @type {number | null} */
      let lastLineMs = null;
      let sawContent = false;
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (/** @type {Buffer} */ chunk) => {
        bytes += chunk.length;
        if (collect) chunks.push(chunk);
        // The answer's lines are whole lines of JSON: a chunk ending one holds the latest result.
        if (lines && firstLineMs !== null && chunk.includes(10)) lastLineMs = performance.now() - start;
        if (lines && firstLineMs === null) {
          for (let i = 0; i < chunk.length; i++) {
            const c = chunk[i];
            if (c === 10) {
              if (sawContent) {
                firstLineMs = performance.now() - start;
                lastLineMs = firstLineMs;
                break;
              }
            } else if (c !== 13 && c !== 32) {
              sawContent = true;
            }
          }
        }
      });
      res.once('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes,
          ttfbMs,
          firstLineMs,
          lastLineMs,
          totalMs: performance.now() - start,
          body: collect ? Buffer.concat(chunks) : null,
        });
      });
      res.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)),
      timeoutMs,
    );
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

/**
 * @typedef {object} LoadResult
 * @property {number} requests successful requests in the measured window
 * @property {number} errors failed requests (wrong status or network error)
 * @property {number} seconds length of the measured window
 * @property {number} rps successful requests per second
 * @property {number} meanBytes mean body size of the successful answers
 * @property {string | null} firstError description of the first failure
 */

/**
 * Fixed-duration load: `connections` keep-alive sockets, each sending the next request as soon
 * as the previous answer is fully read. Stops by itself at the deadline (or after maxRequests).
 * @param {string} url
 * @param {{ headers?: Record<string, string>, connections: number, durationMs: number,
 *   warmupMs?: number, maxRequests?: number, okStatus?: number, method?: string,
 *   body?: string | Buffer }} options
 * @returns {Promise<LoadResult>}
 */
export async function loadTest(url, options) {
  const {
    headers = {},
    connections,
    durationMs,
    warmupMs = 0,
    maxRequests = 10_000_000,
    okStatus = 200,
    method = 'GET',
    body,
  } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  try {
    if (warmupMs > 0) await window(warmupMs);
    return await window(durationMs);
  } finally {
    agent.destroy();
  }

  /** @param {number} ms */
  async function window(ms) {
    const start = performance.now();
    const deadline = start + ms;
    let requests = 0;
    let errors = 0;
    let bytes = 0;
    /** @type {string | null} */
    let firstError = null;
    const worker = async () => {
      while (performance.now() < deadline && requests + errors < maxRequests) {
        try {
          const r = await request(url, { method, headers, body, agent, timeoutMs: Math.max(5000, ms * 2) });
          if (r.status === okStatus) {
            requests++;
            bytes += r.bytes;
          } else {
            errors++;
            firstError ??= `HTTP ${r.status}`;
          }
        } catch (err) {
          errors++;
          firstError ??= /** @type {Error} */ (err).message;
          if (errors > 100 && requests === 0) break; // nothing works: stop early
        }
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    const seconds = (performance.now() - start) / 1000;
    return {
      requests,
      errors,
      seconds,
      rps: requests / seconds,
      meanBytes: requests ? bytes / requests : 0,
      firstError,
    };
  }
}

/**
 * One GET of a whole file of `bytes` bytes, as the throughput of a download row: refused unless
 * the answer is 200 with every byte.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {string} what
 * @param {number} bytes
 * @returns {Promise<import('./measure.mjs').Measure>}
 */
export async function downloadThroughput(url, headers, what, bytes) {
  const r = await request(url, { headers });
  checkEndpoint(r, what);
  if (r.bytes !== bytes) throw new Error(`${what} sent ${r.bytes} of ${bytes} bytes`);
  return {
    value: mibPerSecond(r.bytes, r.totalMs / 1000),
    unit: 'MiB/s',
    detail: `${fmtSize(r.bytes)} in ${(r.totalMs / 1000).toFixed(2)} s`,
  };
}
