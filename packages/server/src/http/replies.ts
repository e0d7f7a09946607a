import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * File Browser's plain-text status body: "<code> <reason>\n", with "(message)" appended to an
 * error. Which server errors may say why is decided by the caller (AppError.told).
 */
export function statusText(code: number, message = ''): string {
  const base = `${code} ${STATUS_CODES[code] ?? ''}`.trimEnd();
  return message && code >= 400 ? `${base} (${message})\n` : `${base}\n`;
}

/** Answers with a status and its plain-text body, as every non-JSON handler of the old server does. */
export function sendStatus(reply: FastifyReply, code: number, message = ''): FastifyReply {
  if (code === 204 || code === 304) return reply.code(code).send();
  return reply
    .code(code)
    .header('Content-Type', 'text/plain; charset=utf-8')
    .header('X-Content-Type-Options', 'nosniff')
    .send(statusText(code, message));
}
