import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MEDIA } from '@filebrowser/contract';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../../config/config-error.js';
import { parseListenAddress } from '../../config/listen-address.js';
import type { AppContext } from '../../context.js';
import { ACCOUNT_CHANGES, OPEN } from '../reach.js';
import { raw, statusLine } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';
import type { AppMetrics } from './collectors.js';

/**
 * `/metrics` on the main listener: for administrators when metrics are on and have no listener
 * of their own; 404 otherwise, so the path never falls through to the app page.
 */
export function metricsRoutes(ctx: AppContext, metrics: AppMetrics | undefined): FastifyPluginAsync {
  return async (app) => {
    if (!metrics || ctx.config.metricsAddress) {
      app.all(
        '/metrics',
        {
          config: { reach: OPEN, audit: false },
          schema: {
            summary: 'metrics are off, or served on their own address',
            tags: ['metrics'],
            response: { 404: statusLine('not here') },
          },
        },
        async (_request, reply) => sendStatus(reply, 404),
      );
      return;
    }
    const schema = {
      summary: 'Prometheus metrics (administrators)',
      tags: ['metrics'],
      response: { 200: raw('the Prometheus text format', MEDIA.prometheus) },
    };
    app.get(
      '/metrics',
      { config: { reach: ACCOUNT_CHANGES, needs: 'admin' }, schema },
      async (_request, reply) => {
        const { contentType, body } = await metrics.text();
        return reply.type(contentType).send(body);
      },
    );
  };
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'no such local address',
};

/**
 * The separate listener of --metricsAddress: GET /metrics without sign-in, as scrapers expect;
 * whoever can reach the address is trusted. It opens when the app is ready and closes with it.
 */
export function serveMetricsApart(
  app: FastifyInstance,
  metrics: AppMetrics,
  address: string,
): MetricsListener {
  const { host, port } = parseListenAddress(address, 'metricsAddress');
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 Not Found\n');
      return;
    }
    metrics.text().then(
      ({ contentType, body }) => res.writeHead(200, { 'Content-Type': contentType }).end(body),
      (err: unknown) => {
        app.log.error({ err }, 'metrics could not be collected');
        res
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('500 Internal Server Error\n');
      },
    );
  });
  app.addHook('onReady', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const why = err.code ? LISTEN_ERRORS[err.code] : undefined;
        reject(why ? new ConfigError(`cannot listen on the metrics address ${address}: ${why}`) : err);
      });
      server.listen(port, host, () => resolve());
    });
  });
  app.addHook('onClose', async () => {
    if (!server.listening) return;
    // Scrapers keep their connections open; they must not hold the shutdown.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  });
  return {
    url: () => {
      const a = server.address() as AddressInfo | null;
      if (!a) return undefined;
      const h = a.address.includes(':') ? `[${a.address}]` : a.address;
      return `http://${h}:${a.port}/metrics`;
    },
  };
}

export interface MetricsListener {
  /** Where metrics are scraped, once listening. */
  url(): string | undefined;
}
