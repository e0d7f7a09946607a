import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { inlineURL } from '../../../api/file-view';
import { encodePath, parentPath } from '../../../utils/paths';

/** Whether a file opens with a rendered view beside its source. */
export function isMarkdownName(name: string): boolean {
  return /\.(md|markdown|mdown|mkd)$/i.test(name);
}

// Raw HTML is allowed in the source (READMEs use it for badges and layout) because DOMPurify,
// not markdown-it, is what makes the result safe.
const markdown = new MarkdownIt({ html: true, linkify: true });

// Tags that are not scripts yet still act: styles restyle the whole app, frames and forms load
// or send elsewhere, base and meta redirect links.
const FORBID_TAGS = [
  'style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'form',
  'input',
  'button',
  'select',
  'textarea',
  'base',
  'link',
  'meta',
];
// An inline style can lay a fake dialog over the page.
const FORBID_ATTR = ['style'];

let purifier: ReturnType<typeof DOMPurify> | null = null;
/** The folder of the file being rendered, for its relative image paths (rendering is synchronous). */
let currentFolder = '/';

function isDataImage(src: string): boolean {
  return /^data:image\/(png|gif|jpe?g|webp|avif|bmp);/i.test(src);
}

function hasScheme(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(url);
}

/**
 * `url` as the browser's URL parser reads it: without the spaces and control characters around
 * it, and without tabs and newlines anywhere (`/<tab>/host` is `//host` to a browser).
 */
function asParsed(url: string): string {
  let start = 0;
  let end = url.length;
  while (start < end && url.charCodeAt(start) <= 0x20) start++;
  while (end > start && url.charCodeAt(end - 1) <= 0x20) end--;
  return url.slice(start, end).replace(/[\t\n\r]/g, '');
}

/**
 * The URL the browser would fetch for `url` on this page, when that is on this page's origin
 * (null otherwise).
 * Resolved by the URL parser itself, as the browser will: `/\\host/x` (a backslash is a slash to
 * it) or `//host/x` leave the origin though they start with a slash.
 */
function onThisOrigin(url: string): string | null {
  try {
    const resolved = new URL(url, window.location.href);
    return resolved.origin === window.location.origin ? resolved.href : null;
  } catch {
    return null;
  }
}

/** A path relative to the Markdown file (`pics/a.png`, `../logo.png`), as the raw endpoint's URL. */
function besideFile(relative: string): string | null {
  const path = relative.split(/[?#]/)[0] ?? '';
  if (!path) return null;
  try {
    // URL resolution settles "./" and "../" (never above the root) and the percent-encoding.
    const resolved = new URL(path, `http://files${encodePath(currentFolder)}`);
    return inlineURL(decodeURIComponent(resolved.pathname));
  } catch {
    return null;
  }
}

/**
 * What an element may load (an image, a video, its poster, a background): only from this server,
 * since a remote one would tell its host who read the file and when. A path relative to the file
 * is the file beside it, fetched through the raw endpoint; inline `data:` images stay. Whatever
 * is kept has been resolved to this origin by the URL parser, the check made last on every way.
 */
function safeSource(src: string): string | null {
  if (isDataImage(src)) return src;
  const url = asParsed(src);
  if (hasScheme(url) || url.startsWith('/') || url.startsWith('\\')) return onThisOrigin(url);
  const raw = besideFile(url);
  return raw !== null && onThisOrigin(raw) !== null ? raw : null;
}

/** Attributes with which an element loads something by itself: kept only from this origin. */
const LOADING_ATTRIBUTES = ['src', 'poster', 'background'];
/** Lists of sources (`srcset`) and pings to send on a click: dropped, `src` is enough. */
const DROPPED_ATTRIBUTES = ['srcset', 'ping'];

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  // An instance of its own, so these hooks never touch another use of DOMPurify.
  const instance = DOMPurify(window);
  instance.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A' && node.hasAttribute('href')) {
      const href = node.getAttribute('href') ?? '';
      if (href.startsWith('#')) return;
      // A new tab, with no handle back to this one and no referrer carrying the file's path.
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
    for (const name of LOADING_ATTRIBUTES) {
      const value = node.getAttribute(name);
      if (value === null) continue;
      const safe = safeSource(value);
      if (safe === null) node.removeAttribute(name);
      else node.setAttribute(name, safe);
    }
    for (const name of DROPPED_ATTRIBUTES) node.removeAttribute(name);
  });
  purifier = instance;
  return instance;
}

/**
 * Markdown as HTML that is safe to put in the page: no scripts, no event handlers, no
 * javascript: (or other script) links, no frames, forms or styles, links opening in a new tab
 * without an opener, and images, media, posters and backgrounds only from this server (or inline
 * data images).
 */
export function renderMarkdown(source: string, filePath: string): string {
  const html = markdown.render(source);
  currentFolder = parentPath(filePath);
  return getPurifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR,
  });
}
