// The heavy side of `npm run load`'s mixed scenario, run in a worker thread of its own (so that
// receiving megabytes of listings does not delay the side that measures): `connections` loops,
// each sending the next of `requests` (in turn) as soon as the previous answer is read whole,
// until `seconds` have passed. autocannon cannot send WebDAV's PROPFIND, hence node:http.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { request } from './http.mjs';

/**
 * @typedef {object} HeavyRequest
 * @property {string} method
 * @property {string} url
 * @property {Record<string, string>} headers
 * @property {string} [body]
 */

/**
 * @param {{ connections: number, seconds: number, requests: HeavyRequest[] }} options
 */
async function run({ connections, seconds, requests }) {
  const deadline = performance.now() + seconds * 1000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  /** @type {Record<string, number>} */
  const statuses = {};
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  const loop = async (/** @type {number} */ first) => {
    for (let i = first; performance.now() < deadline; i++) {
      const r = /** @type {HeavyRequest} */ (requests[i % requests.length]);
      try {
        const reply = await request(r.url, { ...r, agent, timeoutMs: 120_000 });
        statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        latencies.push(reply.totalMs);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, i) => loop(i)));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
  return { requests: latencies.length, statuses, errors, p50ms: at(0.5), p99ms: at(0.99) };
}

parentPort?.postMessage(await run(workerData));
