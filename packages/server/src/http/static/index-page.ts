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

/** The page's policy: no inline script, nothing from elsewhere but the captcha when enabled. */
export function pageCsp(startup: StartupSettings): string {
  const captcha =
    startup.ReCaptcha && startup.ReCaptchaHost ? ` ${new URL(startup.ReCaptchaHost).origin}` : '';
  const gstatic = captcha ? ' https://www.gstatic.com' : '';
  return [
    "default-src 'self'",
    `script-src 'self'${captcha}${gstatic}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    "connect-src 'self' ws: wss:",
    `frame-src 'self'${captcha}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}
