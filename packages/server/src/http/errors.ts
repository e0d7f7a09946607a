import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, fromSystemError } from '../errors.js';
import { sendStatus } from './replies.js';

/** The one place where errors become HTTP answers. Unknown errors are logged, never described. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) {
      for (const [k, v] of Object.entries(error.headers)) void reply.header(k, v);
      if (error.status >= 500) request.log.error({ err: error }, error.message);
      return sendStatus(reply, error.status, error.status < 500 ? error.message : '');
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
    if (mapped) return sendStatus(reply, mapped.status);
    request.log.error({ err: error }, 'request failed');
    return sendStatus(reply, 500);
  });
}
