import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { SearchHit } from '@filebrowser/contract';
import type { FileAccess } from './access.js';
import { mimeByExtension } from './mime.js';

export interface SearchQuery {
  caseSensitive: boolean;
  /** `type:` conditions; a hit must match one of them when there are any. */
  types: ((name: string) => boolean)[];
  /** Name terms; a hit's base name must contain one of them when there are any. */
  terms: string[];
}

const MEDIA_TYPES: Record<string, string> = {
  image: 'image',
  audio: 'audio',
  music: 'audio',
  video: 'video',
};

/** The query syntax of contract 7, processed in the same order as File Browser. */
export function parseQuery(query: string): SearchQuery {
  const caseSensitive = /case:sensitive/.test(query);
  let rest = query.replace(/case:(sensitive|insensitive)/g, '').trim();
  const types: SearchQuery['types'] = [];
  for (const m of rest.matchAll(/type:(\w+)/g)) {
    const word = m[1] as string;
    const media = MEDIA_TYPES[word];
    types.push(
      media ? (name) => mimeByExtension(name).startsWith(media) : (name) => name.endsWith('.' + word),
    );
  }
  rest = rest.replace(/type:\w+/g, '');
  if (!caseSensitive) rest = rest.toLowerCase();
  rest = rest.trim();
  let terms: string[] = [];
  if (rest.length >= 2 && rest.startsWith('"') && rest.endsWith('"')) terms = [rest.slice(1, -1)];
  else if (rest !== '') terms = rest.split(' ');
  return { caseSensitive, types, terms };
}

function matches(q: SearchQuery, name: string): boolean {
  if (q.types.length > 0 && !q.types.some((t) => t(name))) return false;
  if (q.terms.length === 0) return true;
  const haystack = q.caseSensitive ? name : name.toLowerCase();
  return q.terms.some((t) => haystack.includes(t));
}

/** Folders read ahead of the walk, through the thread pool, while earlier ones are matched. */
const READ_AHEAD = 8;

interface Pending {
  real: string;
  /** Virtual path with a trailing slash. */
  prefix: string;
  dirents?: Promise<fs.Dirent[] | undefined>;
}

function readFolder(real: string): Promise<fs.Dirent[] | undefined> {
  return fsp.readdir(real, { withFileTypes: true }).catch(() => undefined);
}

/**
 * Walks a folder (links not followed, escaping ones skipped, unreadable folders skipped, folders
 * failing the rules pruned) and yields hits with paths relative to it. Stops when `signal` aborts.
 *
 * The folders next in line are read ahead (`READ_AHEAD` at a time, in the thread pool), so the
 * disk works while the main thread matches names; results still come in the walk's order.
 */
export async function* searchTree(
  access: FileAccess,
  rootReal: string,
  rootVirtual: string,
  query: string,
  signal?: AbortSignal,
): AsyncGenerator<SearchHit> {
  const q = parseQuery(query);
  const relativeFrom = rootVirtual === '/' ? 1 : rootVirtual.length + 1;
  const { rules } = access;
  const rootPrefix = rootVirtual.endsWith('/') ? rootVirtual : rootVirtual + '/';
  const stack: Pending[] = [{ real: rootReal, prefix: rootPrefix }];
  const readAhead = () => {
    for (let i = stack.length - 1, n = 0; i >= 0 && n < READ_AHEAD; i--, n++) {
      const next = stack[i]!;
      next.dirents ??= readFolder(next.real);
    }
  };
  try {
    while (stack.length > 0) {
      if (signal?.aborted) return;
      readAhead();
      const dir = stack.pop()!;
      const dirents = await dir.dirents;
      if (!dirents) continue;
      const realPrefix = dir.real === '/' ? '/' : dir.real + '/';
      const subdirs: Pending[] = [];
      for (const d of dirents) {
        const name = d.name;
        if (!rules.checkChild(dir.prefix, name)) continue;
        let isDir = d.isDirectory();
        if (d.isSymbolicLink()) {
          const virtual = dir.prefix + name;
          try {
            const child = await access.scope.resolveChild(dir.real, name);
            if (!access.checkResolved({ virtual, real: child.real })) continue;
            isDir = !!child.stat?.isDirectory();
          } catch {
            continue; // a link out of the scope is not part of it
          }
        } else if (isDir) {
          subdirs.push({ real: realPrefix + name, prefix: dir.prefix + name + '/' });
        }
        if (matches(q, name)) yield { dir: isDir, path: (dir.prefix + name).slice(relativeFrom) };
      }
      // Depth-first in name order, like File Browser's walk.
      for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
    }
  } finally {
    // Reads started ahead that nobody will look at must not end as unhandled rejections.
    for (const p of stack) void p.dirents?.catch(() => undefined);
  }
}
