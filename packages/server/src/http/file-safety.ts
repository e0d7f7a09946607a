import type { FastifyReply } from 'fastify';

/**
 * The policy of every response that carries bytes someone put in a file (downloads, previews,
 * subtitles, archives, the branding folder). `sandbox` gives a document opened from it a unique
 * origin with scripts, forms and plugins off, so even a file the browser renders as HTML or SVG
 * cannot act as the app; `default-src 'none'` stops it from loading anything but its own images,
 * media and inline styles. `script-src 'none'` repeats what `default-src` already says: it is
 * the directive contract 6.1 names, and stays in the header in so many words.
 */
export const FILE_CSP =
  "sandbox; default-src 'none'; script-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";

/**
 * Audio and video opened in a tab of their own play in the browser's media document, whose
 * player fetches the file again (with ranges) as a CORS request: from a unique origin that
 * request is refused. Keeping the origin is safe here because nothing in a sandbox without
 * `allow-scripts` runs script, and with nosniff a media type is never rendered as a page.
 */
const MEDIA_CSP = FILE_CSP.replace('sandbox;', 'sandbox allow-same-origin;');

const essence = (type: string) => type.split(';')[0]!.trim().toLowerCase();

/** Types a browser runs as script or style, or renders as a document that may run script. */
function isExecutable(type: string): boolean {
  const m = essence(type);
  return (
    m === 'text/html' ||
    m === 'application/xhtml+xml' ||
    m === 'text/xml' ||
    m === 'application/xml' ||
    m === 'text/xsl' ||
    m === 'text/css' ||
    m === 'text/javascript' ||
    m === 'application/javascript' ||
    m === 'application/x-javascript' ||
    m === 'application/ecmascript' ||
    m === 'text/ecmascript' ||
    (m.endsWith('+xml') && m !== 'image/svg+xml')
  );
}

/**
 * The type to label file bytes with: script, style and markup become plain text, so no page can
 * load them as a script or stylesheet (nosniff makes the browser hold to the label) and opening
 * one shows its source. SVG keeps its type, for image viewers; the sandbox keeps it inert.
 * Flash, long gone from browsers, is never labelled as such.
 */
export function inertType(type: string): string {
  if (isExecutable(type)) return 'text/plain; charset=utf-8';
  if (essence(type) === 'application/x-shockwave-flash') return 'application/octet-stream';
  return type;
}

/**
 * The one place that sets the safety headers of file bytes; `type` is the Content-Type the
 * response is sent with. It replaces the app-wide CSP rather than adding to it, so the file's
 * policy is the whole policy. CORP keeps other sites from embedding the bytes (a logged-in
 * user's images or media through a cookie-authenticated URL).
 */
export function fileSafetyHeaders(reply: FastifyReply, type: string): void {
  const m = essence(type);
  const media = m.startsWith('audio/') || m.startsWith('video/');
  void reply.header('Content-Security-Policy', media ? MEDIA_CSP : FILE_CSP);
  void reply.header('X-Content-Type-Options', 'nosniff');
  void reply.header('Cross-Origin-Resource-Policy', 'same-origin');
}
