import { nameTried } from '../../auth/api-tokens.js';
import { LoginRequest, MEDIA, RENEW_HEADER, SessionToken, SignupRequest } from '@filebrowser/contract';
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { audit, credentialRefused } from '../../audit/http.js';
import { createAccount } from '../../auth/accounts.js';
import type { ServerContext } from '../../services.js';
import { AppError, badRequest, forbidden, unauthorized } from '../../errors.js';
import { currentAuth } from '../guards.js';
import { OPEN, SESSION_ONLY } from '../reach.js';
import { lenientJson, statusLine, text } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';

const BODY_LIMIT = 1024 * 1024;

/** Reads a JSON body leniently: login answers 403 (not 400) to anything it cannot read, as before. */
function jsonBody<T>(request: FastifyRequest): T | undefined {
  const raw = request.body;
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  try {
    const value = JSON.parse(raw) as unknown;
    return value && typeof value === 'object' ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** A wrong password, a missing captcha, or too many of those: what fail2ban counts. */
export function isRefusal(err: unknown): err is AppError {
  return err instanceof AppError && (err.kind === 'forbidden' || err.kind === 'too_many_requests');
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * Renewal ends the session it is given, so it takes the token from X-Auth only: the cookie, sent
 * by the browser on any GET, must not let another page end a session.
 */
const tokenInHeader: onRequestAsyncHookHandler = async (request) => {
  if (!request.headers['x-auth']) throw unauthorized();
};

export function authRoutes(ctx: ServerContext): FastifyPluginAsync {
  return async (app) => {
    // These endpoints take any body type and parse it themselves (see jsonBody).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );

    // File Browser accepted any method on these three.
    app.all(
      '/api/login',
      {
        config: { reach: OPEN, audit: 'auth.login' },
        schema: {
          summary: 'sign in: the answer is a session token',
          readBody: lenientJson(
            'any method and Content-Type; an unreadable body is a refusal (403)',
            LoginRequest,
          ),
          response: { 200: text('the session token', SessionToken, MEDIA.jwt) },
        },
      },
      async (request, reply) => {
        const body = jsonBody<LoginRequest>(request);
        audit(request, { username: nameTried(str(body?.username) ?? '') });
        const method = ctx.store.settings.get().authMethod;
        if (!body && method === 'json') throw forbidden();
        const token = await ctx.auth
          .login({
            username: str(body?.username),
            password: str(body?.password),
            recaptcha: str(body?.recaptcha),
            ip: request.ip,
            peer: request.socket.remoteAddress ?? '',
            headers: request.headers,
          })
          .catch(async (err: unknown) => {
            if (isRefusal(err)) {
              credentialRefused(ctx, request, {
                username: str(body?.username) ?? '',
                status: err.status,
              });
            }
            throw err;
          });
        // The account signed in to (proxy and noauth sign-ins name it only in the token).
        const user = (await ctx.auth.verify(token).catch(() => undefined))?.user;
        if (user) audit(request, { userId: user.id, username: user.username });
        return reply.type('text/plain; charset=utf-8').send(token);
      },
    );

    app.all(
      '/api/renew',
      {
        onRequest: tokenInHeader,
        // A renewal keeps a session going (each open page does it hourly): not a change to record.
        config: { reach: SESSION_ONLY, audit: false },
        schema: {
          summary: 'a fresh token for the session of the X-Auth token',
          response: { 200: text('the new session token', SessionToken, MEDIA.jwt) },
        },
      },
      async (request, reply) => {
        const token = await ctx.auth.renew(currentAuth(request));
        return reply.header(RENEW_HEADER, 'false').type('text/plain; charset=utf-8').send(token);
      },
    );

    // New: POST only, so that no link or image can end a session.
    app.post(
      '/api/logout',
      {
        config: { reach: SESSION_ONLY, audit: 'auth.logout' },
        schema: { summary: 'end the session', response: { 200: statusLine('the session has ended') } },
      },
      async (request, reply) => {
        const { sessionId, user } = currentAuth(request);
        await ctx.auth.logout(sessionId, user.id);
        return sendStatus(reply, 200);
      },
    );

    app.all(
      '/api/signup',
      {
        config: { reach: OPEN, audit: 'auth.signup' },
        schema: {
          summary: 'make an account, when the settings allow sign-up',
          readBody: lenientJson('any method and Content-Type', SignupRequest),
          response: {
            200: statusLine('the account was made'),
            405: statusLine('sign-up is off'),
          },
        },
      },
      async (request, reply) => {
        const settings = ctx.store.settings.get();
        if (!settings.signup) return sendStatus(reply, 405);
        if (settings.authMethod !== 'json')
          throw new AppError('method_not_allowed', 'signup needs password login');
        const body = jsonBody<SignupRequest & { recaptcha?: string }>(request);
        const username = str(body?.username) ?? '';
        const password = str(body?.password) ?? '';
        audit(request, { username });
        if (!username || !password) throw badRequest('username and password are required');
        await ctx.auth.checkSignupCaptcha(str(body?.recaptcha) ?? '');
        await createAccount(ctx, { username }, password, 'signup');
        return sendStatus(reply, 200);
      },
    );
  };
}
