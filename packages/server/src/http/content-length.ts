import type { IncomingMessage } from 'node:http';

/** The body length a request declares (Content-Length), undefined when it declares none. */
export function declaredLength(raw: IncomingMessage): number | undefined {
  const header = raw.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  const n = Number(header);
  return Number.isSafeInteger(n) ? n : undefined;
}
