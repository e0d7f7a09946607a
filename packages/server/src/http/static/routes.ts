import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { HealthStatus, MEDIA, PathParams } from '@filebrowser/contract';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.js';
import { fileSafetyHeaders, inertType } from '../file-safety.js';
import { raw } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';
import { OPEN } from '../reach.js';
import type { RouteIndex } from '../route-index.js';
import { pageCsp, pageNonce, renderIndex } from './index-page.js';
import { FAVICON, ICONS_DIR, MASKABLE_ICON, webManifest } from './manifest.js';
import { startupSettings } from './startup.js';

export interface StaticOptions {
  /** Archive formats this server can write, advertised to the page. */
  archiveFormats?: () => string[];
  /** Every route of the app, to tell a wrong method (405) from an unknown path (404). */
  routes?: RouteIndex;
}

const HASHED_ASSET = /^assets\//;
const BRANDING_CSS = 'custom.css';

/**
 * /static/* (the built web app and branding files), /manifest.json, /favicon.ico, /health, and the
 * page for every other GET.
 */
export function staticRoutes(ctx: AppContext, opts: StaticOptions = {}): FastifyPluginAsync {
  const dist = ctx.config.webDist;
  let template: string | undefined;
  const readTemplate = () => {
    template ??= fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
    return template;
  };

  return async (app) => {
    await app.register(fastifyStatic, { root: dist, serve: false, preCompressed: true, cacheControl: false });

    // Probes (the container's HEALTHCHECK, load balancers) ask whether requests can be served,
    // and nearly every one needs the database.
    const health = {
      summary: 'whether requests can be served: the database answers',
      tags: ['app'],
      response: { 200: HealthStatus, 503: HealthStatus },
    };
    app.all('/health', { config: { reach: OPEN, audit: false }, schema: health }, async (request, reply) => {
      void reply.type('application/json; charset=utf-8');
      try {
        await ctx.store.ping();
      } catch (err) {
        request.log.error({ err }, 'health check: the database does not answer');
        return reply.code(503).send(
          JSON.stringify({
            status: 'unavailable',
            reason: 'the database does not answer',
            instance: ctx.store.instance.id,
          }),
        );
      }
      return reply.send(JSON.stringify({ status: 'OK', instance: ctx.store.instance.id }));
    });

    // Branding files are whatever the administrator's folder holds, so they are served as user
    // files are (an SVG logo must not run script in this origin). The Content-Type is only known
    // once @fastify/static has set it, hence the hook.
    const fromBranding = new WeakMap<FastifyRequest, string>();
    const onSend: onSendAsyncHookHandler = async (request, reply, payload) => {
      const rel = fromBranding.get(request);
      if (rel === undefined) return payload;
      const type = String(reply.getHeader('content-type') ?? 'application/octet-stream');
      // custom.css is the administrator's own stylesheet for the page: it keeps text/css.
      const served = rel === BRANDING_CSS ? type : inertType(type);
      fileSafetyHeaders(reply.type(served), served);
      return payload;
    };

    /** What the branding folder has at `rel`, if anything (only its img/ files and custom.css are served). */
    const inBranding = (rel: string): { base: string; stat: fs.Stats } | undefined => {
      const branding = ctx.store.settings.get().branding.files;
      if (!branding || !(rel.startsWith('img/') || rel === BRANDING_CSS)) return undefined;
      const base = path.resolve(branding);
      const file = path.join(base, rel);
      const stat = file.startsWith(base + path.sep)
        ? fs.statSync(file, { throwIfNoEntry: false })
        : undefined;
      return stat && { base, stat };
    };

    const sendStatic = (request: FastifyRequest, reply: FastifyReply, rel: string) => {
      const branded = inBranding(rel);
      if (branded?.stat.isFile()) {
        fromBranding.set(request, rel);
        return cached(reply, 86400).sendFile(rel, branded.base);
      }
      return cached(reply, HASHED_ASSET.test(rel) ? 31536000 : 86400).sendFile(rel);
    };

    const file = (summary: string, ...types: string[]) => ({
      summary,
      tags: ['app'],
      response: { 200: raw('the file', ...types), 304: { description: 'not modified' } },
    });
    const staticSchema = {
      ...file('the web app’s files, and the branding folder’s img/ and custom.css', MEDIA.file),
      params: PathParams,
    };
    app.get(
      '/static/*',
      { onSend, config: { reach: OPEN }, schema: staticSchema },
      async (request, reply) => {
        const rel = (request.params as { '*': string })['*'];
        if (!rel || rel.endsWith('/')) return sendStatus(reply, 404);
        return sendStatic(request, reply, rel);
      },
    );

    // Browsers and bookmark tools ask for /favicon.ico whatever the page says.
    app.get(
      '/favicon.ico',
      { onSend, config: { reach: OPEN }, schema: file('the icon', MEDIA.image) },
      async (request, reply) => sendStatic(request, reply, FAVICON),
    );

    const manifest = file('the web app manifest', MEDIA.manifest);
    app.get('/manifest.json', { config: { reach: OPEN }, schema: manifest }, async (_request, reply) => {
      const { branding } = ctx.store.settings.get();
      // A branding folder with its own icons but no maskable one must not get our logo on Android.
      const ownIcons = inBranding(ICONS_DIR)?.stat.isDirectory() ?? false;
      const body = webManifest({
        name: branding.name,
        color: branding.color,
        baseURL: ctx.config.baseURL,
        maskable: !ownIcons || (inBranding(MASKABLE_ICON)?.stat.isFile() ?? false),
      });
      return reply
        .type('application/manifest+json; charset=utf-8')
        .header('Cache-Control', 'no-cache')
        .header('X-Content-Type-Options', 'nosniff')
        .send(JSON.stringify(body));
    });

    app.setNotFoundHandler(async (request, reply) => {
      const url = request.url.split('?')[0] ?? '';
      // A path some route has, asked with another method (static files excepted: contract 14).
      const allowed = url.startsWith('/static/') ? [] : (opts.routes?.allowedMethods(decodePath(url)) ?? []);
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        return reply.code(405).header('Allow', allowed.join(', ')).send();
      }
      if ((request.method !== 'GET' && request.method !== 'HEAD') || /^\/(api|static)\//.test(url)) {
        return sendStatus(reply, 404);
      }
      const startup = startupSettings(ctx, opts.archiveFormats?.());
      const nonce = pageNonce();
      let html: string;
      try {
        html = renderIndex(readTemplate(), startup, nonce);
      } catch {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('503 Service Unavailable: the web app is not built; run npm run build\n');
      }
      return reply
        .header('Content-Type', 'text/html; charset=utf-8')
        .header('Content-Security-Policy', pageCsp(startup, nonce))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Referrer-Policy', 'same-origin')
        .header('Cache-Control', 'no-cache, no-store, must-revalidate')
        .send(html);
    });
  };
}

function decodePath(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

function cached(reply: FastifyReply, seconds: number): FastifyReply {
  return reply
    .header('Cache-Control', `public, max-age=${seconds}${seconds > 86400 ? ', immutable' : ''}`)
    .header('X-Content-Type-Options', 'nosniff');
}
