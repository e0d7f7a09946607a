import crypto from 'node:crypto';
import { BRAND_COLOR_PATTERN, DEFAULT_BRAND_COLOR, type StartupSettings } from '@filebrowser/contract';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON that cannot close the script element it sits in, whatever the branding text holds. */
const scriptSafeJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

/**
 * Renders the built index.html for one request. The start-up object travels as a JSON data
 * block (not an inline script), so the page's CSP can forbid inline scripts altogether; the
 * built module scripts and their preloads carry the request's nonce (see `pageCsp`).
 */
export function renderIndex(template: string, startup: StartupSettings, nonce: string): string {
  const title = escapeHtml(startup.Name || 'File Browser');
  const color = BRAND_COLOR_PATTERN.test(startup.Color) ? startup.Color : DEFAULT_BRAND_COLOR;
  // The module preloader reads the nonce from this tag for the preloads it adds later.
  const head =
    `<meta property="csp-nonce" nonce="${nonce}">` +
    // The manifest sits beside the page, not under /static: its scope is the whole app.
    `<link rel="manifest" href="${escapeHtml(startup.BaseURL)}/manifest.json">` +
    `<script id="filebrowser-startup" type="application/json">${scriptSafeJson(startup)}</script>` +
    (startup.CSS ? `<link rel="stylesheet" href="${escapeHtml(startup.StaticURL)}/custom.css">` : '');
  return template
    .replace(/<title>[^<]*<\/title>/, `<title>${title}</title>`)
    .replace(/(<meta name="theme-color" content=")[^"]*(")/, `$1${color}$2`)
    .replace('<!-- FB_STARTUP -->', head)
    .replace(/(src|href)="\.\//g, `$1="${escapeHtml(startup.StaticURL)}/`)
    .replace(/<script(?=[^>]*\ssrc=)|<link(?=[^>]*\srel="modulepreload")/g, `$& nonce="${nonce}"`);
}

/** A fresh nonce for one page: 128 random bits. */
export function pageNonce(): string {
  return crypto.randomBytes(16).toString('base64');
}

/**
 * The page's policy. Scripts run only when the page itself named them with this request's nonce
 * (its built module and preloads) or when such a script loads them ('strict-dynamic'): markup
 * that finds its way into the page cannot name a download under /api/ or a branding file as a
 * script, and no inline script runs. A nonce rather than a path-restricted source, because a
 * source with a path must spell the origin the browser used, which a server behind a proxy that
 * rewrites Host does not know. Nothing from elsewhere but the captcha when enabled, no plugins,
 * no <base> to redirect relative URLs, and framed only by itself.
 */
export function pageCsp(startup: StartupSettings, nonce: string): string {
  const captcha =
    startup.ReCaptcha && startup.ReCaptchaHost ? ` ${new URL(startup.ReCaptchaHost).origin}` : '';
  const gstatic = captcha ? ' https://www.gstatic.com' : '';
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'${captcha}${gstatic}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    "connect-src 'self' ws: wss:",
    `frame-src 'self'${captcha}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}
