import path from 'node:path';
import fastifyCookie from '@fastify/cookie';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type onSendAsyncHookHandler,
} from 'fastify';
import { AuditLog } from './audit/log.js';
import { installAudit } from './audit/http.js';
import { auditRoutes } from './http/audit/routes.js';
import { AuthService } from './auth/service.js';
import type { ServerConfig } from './config/types.js';
import type { AppContext, Logger } from './context.js';
import { authRoutes } from './http/auth/routes.js';
import { readBodiesAsJson } from './http/body-parsers.js';
import { commandRoutes } from './http/command/routes.js';
import { jobsRoutes } from './http/jobs/routes.js';
import { lockRoutes } from './http/locks/routes.js';
import { JobRegistry } from './jobs/registry.js';
import { addDavMethods, davRoutes } from './http/dav/routes.js';
import { rootIsCaseInsensitive } from './files/access/case.js';
import { BEAT_MS, InstanceRegistry } from './instances.js';
import { periodically } from './http/periodic.js';
import { quotaLedgerOf } from './files/change/quota.js';
import { heavyRequests } from './http/heavy.js';
import { availableArchiveFormats } from './files/archive/index.js';
import { installAccessLog } from './http/access-log.js';
import { closeAfterEarlyAnswers, guardConnections, serverOptions } from './http/connections.js';
import { installErrorHandler } from './http/errors.js';
import { guardRoute } from './http/guards.js';
import type { AppMetrics } from './http/metrics/collectors.js';
import { metricsRoutes, serveMetricsApart, type MetricsListener } from './http/metrics/routes.js';
import type { RouteRecord } from './http/openapi/document.js';
import { openApiRoutes } from './http/openapi/routes.js';
import { previewRoutes } from './http/preview/routes.js';
import { rawRoutes } from './http/raw/routes.js';
import { sendStatus } from './http/replies.js';
import { RouteIndex } from './http/route-index.js';
import { resourcesRoutes } from './http/resources/routes.js';
import { searchRoutes } from './http/search/routes.js';
import { settingsRoutes } from './http/settings/routes.js';
import { publicShareRoutes } from './http/shares/public-routes.js';
import { shareRoutes } from './http/shares/routes.js';
import { staticRoutes } from './http/static/routes.js';
import { subtitleRoutes } from './http/subtitle/routes.js';
import { tokenRoutes } from './http/tokens/routes.js';
import { trashRoutes } from './http/trash/routes.js';
import { tusRoutes } from './http/tus/routes.js';
import { usageRoutes } from './http/usage/routes.js';
import { usersRoutes } from './http/users/routes.js';
import { nativeStatus } from './files/listing/native.js';
import { PreviewService } from './preview/service.js';
import type { ServerContext } from './services.js';
import type { Store } from './store/index.js';

export interface BuildOptions {
  /** The process's logger (see logging.ts); none by default, as tests want. */
  logger?: FastifyBaseLogger;
  /** Folders searched for ffmpeg at start, PATH-style (default: the process's PATH). */
  pathEnv?: string;
  /** A hook on every answer, for tests (the check of answers against the API document). */
  onSend?: onSendAsyncHookHandler;
  /**
   * Tests only (no request can set it): runs between a replacing write's last quota check and
   * the rename that puts the new file in place, with the real path being replaced, so that a
   * test can change the destination in that window without a clock.
   */
  beforeReplace?: (realPath: string) => Promise<void> | void;
}

export interface BuiltApp {
  app: FastifyInstance;
  ctx: ServerContext;
  routes: RouteIndex;
  /** The separate metrics listener of --metricsAddress, when there is one. */
  metricsListener?: MetricsListener;
}

/** Strips the optional base URL (contract 1.1: the prefix may be present or not). */
function stripBaseURL(baseURL: string, url: string): string {
  if (!baseURL) return url;
  if (url === baseURL || url.startsWith(baseURL + '/') || url.startsWith(baseURL + '?')) {
    return url.slice(baseURL.length) || '/';
  }
  return url;
}

/** Builds the whole application on an open store. Tests use this; only main.ts listens. */
export async function buildApp(
  config: ServerConfig,
  store: Store,
  opts: BuildOptions = {},
): Promise<BuiltApp> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // Requests are logged once, at response time, without their query (http/access-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustedProxies,
    bodyLimit: 64 * 1024 * 1024,
    routerOptions: { ignoreDuplicateSlashes: false, maxParamLength: 4096 },
    // Bodies are checked strictly: a number where a string belongs is an error, not a conversion.
    // Query and path values therefore are declared as strings in route schemas.
    ajv: { customOptions: { coerceTypes: false } },
    rewriteUrl: (req) => stripBaseURL(config.baseURL, req.url ?? '/'),
    // Timeouts and caps of every connection, and early answers' drain (http/connections.ts).
    http: serverOptions(config),
  });
  // One object: the services are given the context they are then added to.
  const core: AppContext = { config, store, log: app.log as Logger, heavy: heavyRequests(config) };
  const ctx: ServerContext = Object.assign(core, {
    auth: new AuthService(core),
    audit: new AuditLog(store.audit, core.log),
    jobs: new JobRegistry(store, core.log),
  });
  if (opts.beforeReplace) quotaLedgerOf(ctx).beforeReplace = opts.beforeReplace;

  guardConnections(app.server, config, ctx.log);
  installAccessLog(app);
  closeAfterEarlyAnswers(app);
  installErrorHandler(app);
  installAudit(app, ctx);
  readBodiesAsJson(app);
  if (opts.onSend) app.addHook('onSend', opts.onSend);
  // Moves and staging files a killed process never finished are settled before the first request;
  // then this instance beats, and settles what instances on the same database left when they died.
  const instances = new InstanceRegistry(ctx);
  app.addHook('onReady', async () => instances.start());
  // One server process holds a SQLite file: only instances sharing a database need to beat.
  if (store.instance.shared) {
    periodically(
      app,
      ctx,
      {
        name: `beat ${store.instance.id}`,
        everyMs: BEAT_MS,
        failure: 'this instance could not say it is running',
      },
      () => instances.beat(),
    );
  }
  app.addHook('onClose', async () => instances.stop().catch(() => undefined));
  await app.register(fastifyCookie);

  app.addHook('onRequest', async (request, reply) => {
    const raw = request.originalUrl;
    // A bare base URL is redirected to its folder form so relative asset URLs resolve.
    if (config.baseURL && raw === config.baseURL) return reply.redirect(config.baseURL + '/', 301);
    const pathname = request.url.split('?')[0] ?? '/';
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return sendStatus(reply, 400, 'the request path is not valid percent-encoding');
    }
    if (/\/\/|\/\.\.?(\/|$)/.test(decoded)) {
      const cleaned = path.posix.normalize(decoded).replace(/\/\.\.?$/, '/');
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      return reply.redirect(config.baseURL + encodeURI(cleaned) + query, 301);
    }
    if (pathname.startsWith('/api/')) {
      void reply.header('Cache-Control', 'no-cache, no-store, must-revalidate');
    }
    void reply.header('Content-Security-Policy', "default-src 'self'; style-src 'unsafe-inline';");
    void reply.header('X-Content-Type-Options', 'nosniff');
  });

  // Whether folders are read in C or in JavaScript (docs/configuration.md, FB_NATIVE).
  app.log.debug(nativeStatus());
  // Rules compare lower-cased on a case-insensitive root (contract 1.7): found out once, now.
  if (await rootIsCaseInsensitive(config.root)) {
    app.log.info('the served folder is case-insensitive: rule paths are compared without case');
  }
  // Previews (and their disk cache) hear about every write, move and delete of the file routes.
  const previews = await PreviewService.start(ctx, opts.pathEnv ?? process.env.PATH ?? '');
  const fileEvents = previews.fileEvents();
  // Before any route, so that every route's responses are counted.
  // prom-client (about 9 MB with its default collectors) is loaded only when --metrics is on.
  const metrics: AppMetrics | undefined = config.metrics
    ? new (await import('./http/metrics/collectors.js')).AppMetrics(store, previews)
    : undefined;
  metrics?.observe(app);
  const metricsListener =
    metrics && config.metricsAddress ? serveMetricsApart(app, metrics, config.metricsAddress) : undefined;
  // Known paths asked with a method they do not take answer 405, not 404 (see staticRoutes);
  // each route's guard is made from what it declares its callers reach (http/guards.ts).
  const routes = new RouteIndex();
  // The API document is generated from what each route declared (http/openapi).
  const declared: RouteRecord[] = [];
  app.addHook('onRoute', (route) => {
    // A route without a declaration of what each caller reaches stops the start here.
    guardRoute(ctx, route);
    routes.add(route.method, route.url, route.config?.audit !== undefined, route.config?.reach);
    declared.push({ method: route.method, url: route.url, schema: route.schema });
  });

  await app.register(authRoutes(ctx));
  await app.register(usersRoutes(ctx));
  await app.register(tokenRoutes(ctx));
  await app.register(settingsRoutes(ctx));
  await app.register(resourcesRoutes(ctx, fileEvents));
  await app.register(rawRoutes(ctx));
  await app.register(previewRoutes(ctx, previews));
  await app.register(subtitleRoutes(ctx));
  await app.register(searchRoutes(ctx));
  await app.register(usageRoutes(ctx));
  await app.register(shareRoutes(ctx));
  await app.register(publicShareRoutes(ctx));
  await app.register(tusRoutes(ctx, fileEvents));
  await app.register(trashRoutes(ctx, fileEvents));
  await app.register(jobsRoutes(ctx, fileEvents));
  await app.register(commandRoutes(ctx));
  await app.register(auditRoutes(ctx));
  await app.register(lockRoutes(ctx));
  addDavMethods(app);
  await app.register(davRoutes(ctx, fileEvents));
  await app.register(metricsRoutes(ctx, metrics));
  await app.register(openApiRoutes(ctx, () => declared));
  await app.register(staticRoutes(ctx, { routes, archiveFormats: availableArchiveFormats }));
  return { app, ctx, routes, ...(metricsListener ? { metricsListener } : {}) };
}

export function defaultWebDist(): string {
  return path.resolve(import.meta.dirname, '../../web/dist');
}
