import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PreviewService } from '../../preview/service.js';
import type { Store } from '../../store/index.js';

/** Label of requests no route matched: their URLs are the visitor's, never a label. */
const NO_ROUTE = '(none)';

/**
 * Every metric of one app. A registry of its own, not prom-client's global one, so that several
 * apps in one process (the tests) each count only their own requests.
 */
export class AppMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly durations: Histogram<'route' | 'method'>;
  private readonly bytes: Counter<'route' | 'method'>;
  private readonly started = new WeakMap<FastifyRequest, { at: bigint; bytes: number }>();

  constructor(store: Store, previews: PreviewService) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the request to the last byte of its response, by route pattern',
      labelNames: ['route', 'method'],
      registers,
    });
    this.bytes = new Counter({
      name: 'http_response_bytes_total',
      help: 'Bytes of response bodies sent, by route pattern',
      labelNames: ['route', 'method'],
      registers,
    });
    new Gauge({
      name: 'filebrowser_instance_info',
      help: 'Always 1: names the server that answered, among the instances on its database',
      labelNames: ['instance'],
      registers,
      collect() {
        this.set({ instance: store.instance.id }, 1);
      },
    });
    new Gauge({
      name: 'filebrowser_uploads_pending',
      help: 'Resumable uploads started and not yet finished, all users',
      registers,
      async collect() {
        this.set(await store.uploads.count());
      },
    });
    new Gauge({
      name: 'filebrowser_sessions_active',
      help: 'Signed-in sessions not yet expired or signed out',
      registers,
      async collect() {
        this.set(await store.sessions.countLive());
      },
    });
    new Gauge({
      name: 'filebrowser_previews_queued',
      help: 'Previews waiting for a free image processor',
      registers,
      collect() {
        this.set(previews.load().queued);
      },
    });
    new Gauge({
      name: 'filebrowser_previews_running',
      help: 'Previews being made now',
      registers,
      collect() {
        this.set(previews.load().running);
      },
    });
  }

  /** Counts every response of `app`; the labels are route patterns, never request paths. */
  observe(app: FastifyInstance): void {
    app.addHook('onRequest', async (request, reply) => {
      const tally = { at: process.hrtime.bigint(), bytes: 0 };
      this.started.set(request, tally);
      // A HEAD answer's body is never sent, whatever is written.
      if (request.method !== 'HEAD') countWrites(reply.raw, (n) => (tally.bytes += n));
    });
    app.addHook('onResponse', async (request, reply) => {
      const tally = this.started.get(request);
      const route = request.routeOptions.url ?? NO_ROUTE;
      const method = request.method;
      this.requests.inc({ route, method, status: String(reply.statusCode) });
      if (!tally) return;
      this.durations.observe({ route, method }, Number(process.hrtime.bigint() - tally.at) / 1e9);
      this.bytes.inc({ route, method }, tally.bytes);
    });
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

type Writable = { write: (...args: never[]) => boolean; end: (...args: never[]) => unknown };

/**
 * Streams (downloads, archives) have no Content-Length to read afterwards, so body bytes are
 * counted as they are written.
 */
function countWrites(res: Writable, add: (n: number) => void): void {
  const size = (chunk: unknown): number =>
    typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => unknown;
  (res as { write: unknown }).write = (chunk: unknown, ...rest: unknown[]) => {
    add(size(chunk));
    return write(chunk, ...rest);
  };
  (res as { end: unknown }).end = (chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') add(size(chunk));
    return end(chunk, ...rest);
  };
}
