import type { StartupSettings } from '@filebrowser/contract';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON that cannot close the script element it sits in, whatever the branding text holds. */
const scriptSafeJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

/**
 * Renders the built index.html for one request. The start-up object travels as a JSON data
 * block (not an inline script), so the page's CSP can forbid inline scripts altogether.
 */
export function renderIndex(template: string, startup: StartupSettings): string {
  const title = escapeHtml(startup.Name || 'File Browser');
  const color = /^#[0-9a-fA-F]{3,8}$|^[a-zA-Z]+$/.test(startup.Color) ? startup.Color : '#2979ff';
  const head =
    `<script id="filebrowser-startup" type="application/json">${scriptSafeJson(startup)}</script>` +
    (startup.CSS ? `<link rel="stylesheet" href="${escapeHtml(startup.StaticURL)}/custom.css">` : '');
  return template
    .replace(/<title>[^<]*<\/title>/, `<title>${title}</title>`)
    .replace(/(<meta name="theme-color" content=")[^"]*(")/, `$1${color}$2`)
    .replace('<!-- FB_STARTUP -->', head)
    .replace(/(src|href)="\.\//g, `$1="${escapeHtml(startup.StaticURL)}/`);
}

/** What a CSP host-source can hold: a name or IPv4 address and a port, nothing that ends it. */
const CSP_HOST = /^[a-z0-9.-]+(:\d+)?$/i;

/**
 * Where the page may load scripts from: the built assets folder only, so that no same-origin URL
 * outside it (a download under /api/, a branding file) can ever be a script, even one that some
 * markup injected into the page names. A CSP source with a path needs the origin spelled out:
 * it is the one the browser asked (`Host`, or `X-Forwarded-Host` from a trusted proxy). A host
 * CSP cannot spell (an IPv6 literal) falls back to `'self'`, which still forbids inline script.
 */
export function scriptSource(protocol: string, host: string, baseURL: string): string {
  if (!CSP_HOST.test(host) || (protocol !== 'http' && protocol !== 'https')) return "'self'";
  return `${protocol}://${host.toLowerCase()}${baseURL}/static/assets/`;
}

/**
 * The page's policy: scripts only from the built assets, nothing from elsewhere but the captcha
 * when enabled, no plugins, no <base> to redirect relative URLs, and framed only by itself.
 */
export function pageCsp(startup: StartupSettings, scripts: string): string {
  const captcha =
    startup.ReCaptcha && startup.ReCaptchaHost ? ` ${new URL(startup.ReCaptchaHost).origin}` : '';
  const gstatic = captcha ? ' https://www.gstatic.com' : '';
  return [
    "default-src 'self'",
    `script-src ${scripts}${captcha}${gstatic}`,
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
