import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, fromSystemError } from '../errors.js';
import { ClientGone } from './client-gone.js';
import { sendStatus } from './replies.js';

/** The one place where errors become HTTP answers. Unknown errors are logged, never described. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    const sendAppError = (e: AppError, log = true) => {
      for (const [k, v] of Object.entries(e.headers)) void reply.header(k, v);
      if (log && e.status >= 500) request.log.error({ err: e }, e.message);
      return sendStatus(reply, e.status, e.told ? e.message : '');
    };
    if (error instanceof AppError) return sendAppError(error);
    if (error instanceof ClientGone) {
      // Work dropped because its client left: no fault of the server, and nobody reads the answer.
      request.log.debug('the client went away before the answer');
      return sendStatus(reply, 500);
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const detail = fe.validation
        .map(
          (v) =>
            `${v.instancePath ? v.instancePath.slice(1).replaceAll('/', '.') + ' ' : ''}${v.message ?? ''}`,
        )
        .join(', ');
      return sendStatus(reply, 400, detail || 'invalid request');
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendStatus(reply, fe.statusCode, fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? '' : fe.message);
    }
    const mapped = fromSystemError(error);
    if (mapped) {
      // The condition is the user's to act on, but the operator should hear of it too.
      if (mapped.status >= 500) request.log.warn({ err: error }, mapped.message);
      return sendAppError(mapped, false);
    }
    request.log.error({ err: error }, 'request failed');
    return sendStatus(reply, 500);
  });
}
