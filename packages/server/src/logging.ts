import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export const LOG_FORMATS = ['text', 'json'] as const;
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Fields that may hold a secret. Nothing logs headers or bodies today; this is the second guard
 * should a later `log.warn({ req })` or `{ body }` slip in.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-auth"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-auth"]',
  'headers.cookie',
  'body',
  'password',
  'token',
];

/** The path of a request URL: query strings carry `?auth=` tokens and share passwords. */
export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The logger Fastify is given: ISO times, no pid or hostname, one line per record in `format`. */
export function createLogger(dest: DestinationStream, format: LogFormat, level: LogLevel): PinoLogger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: {
        err: pino.stdSerializers.err,
        // Fastify's own records (client errors) may carry the request: never its headers or query.
        req: (req: { method?: string; url?: string; ip?: string }) => ({
          method: req.method,
          path: pathOnly(req.url ?? ''),
          address: req.ip,
        }),
      },
    },
    format === 'text' ? textDestination(dest) : dest,
  );
}

/** Writes pino's JSON records to `out` as the text lines described in docs/operations.md. */
export function textDestination(out: DestinationStream): DestinationStream {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(formatText(record) + '\n');
    },
  };
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields the text line shows in fixed places (or leaves out: reqId ties JSON records together). */
const PLACED = new Set([
  'level',
  'time',
  'msg',
  'event',
  'reqId',
  'address',
  'user',
  'method',
  'path',
  'status',
  'bytes',
  'ms',
]);

/**
 * A request: `time address user METHOD path status bytes 12ms`. Anything else:
 * `time LEVEL [address METHOD path ]message[ key=value…]`. Every field is one word without
 * control characters, so a line can neither be split nor forged by a username or a path.
 */
export function formatText(r: Record<string, unknown>): string {
  const time = typeof r.time === 'string' ? r.time : new Date().toISOString();
  if (r.event === 'request') {
    return [
      time,
      word(r.address),
      word(r.user),
      word(r.method),
      word(r.path),
      word(r.status),
      word(r.bytes),
      `${word(r.ms)}ms`,
    ].join(' ');
  }
  const parts = [time, LEVEL_NAMES[r.level as number] ?? String(r.level)];
  if (r.method !== undefined) parts.push(word(r.address), word(r.method), word(r.path));
  parts.push(oneLine(String(r.msg ?? '')));
  for (const [key, value] of Object.entries(r)) {
    if (PLACED.has(key) || value === undefined) continue;
    if (key === 'err' && value && typeof value === 'object') {
      parts.push(`error=${JSON.stringify(String((value as { message?: unknown }).message ?? ''))}`);
    } else {
      parts.push(`${key}=${typeof value === 'string' ? word(value) : oneLine(JSON.stringify(value))}`);
    }
  }
  return parts.join(' ');
}

/**
 * What some reader takes for the end of a line or a terminal command: C0 and C1 controls, DEL,
 * and the Unicode line and paragraph separators (a log viewer or an editor breaks at U+0085,
 * U+2028 and U+2029 even where fail2ban does not).
 */
// eslint-disable-next-line no-control-regex
export const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const HAS_LINE_BREAKING = new RegExp(LINE_BREAKING.source);

/** A value as one space-free token: "-" when absent, JSON-quoted when it has spaces or quotes. */
function word(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  const text = String(value);
  // JSON escapes the C0 controls but leaves C1 and U+2028/U+2029 as they are.
  return /[\s"\\]/.test(text) || HAS_LINE_BREAKING.test(text) ? oneLine(JSON.stringify(text)) : text;
}

function oneLine(text: string): string {
  return text.replace(LINE_BREAKING, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
