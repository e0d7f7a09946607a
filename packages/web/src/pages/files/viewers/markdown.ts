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
  return /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//');
}

/**
 * Images load only from this server: a remote image would tell its host who read the file and
 * when. A relative path is a file beside the Markdown file, fetched through the raw endpoint.
 */
function safeImageSource(src: string): string | null {
  if (isDataImage(src)) return src;
  if (!hasScheme(src)) {
    if (src.startsWith('/')) return src;
    const relative = src.split(/[?#]/)[0] ?? '';
    if (!relative) return null;
    try {
      // URL resolution settles "./" and "../" (never above the root) and the percent-encoding.
      const resolved = new URL(relative, `http://files${encodePath(currentFolder)}`);
      return inlineURL(decodeURIComponent(resolved.pathname));
    } catch {
      return null;
    }
  }
  try {
    const url = new URL(src, window.location.href);
    return url.origin === window.location.origin ? url.href : null;
  } catch {
    return null;
  }
}

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
    if (node.tagName === 'IMG') {
      const src = node.getAttribute('src');
      const safe = src === null ? null : safeImageSource(src);
      if (safe === null) node.removeAttribute('src');
      else node.setAttribute('src', safe);
      node.removeAttribute('srcset');
    }
  });
  purifier = instance;
  return instance;
}

/**
 * Markdown as HTML that is safe to put in the page: no scripts, no event handlers, no
 * javascript: (or other script) links, no frames, forms or styles, links opening in a new tab
 * without an opener, and images only from this server or inline data.
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
