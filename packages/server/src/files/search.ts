import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { SearchHit } from '@filebrowser/contract';
import type { FileAccess } from './access.js';
import { mimeByExtension } from './mime.js';
import { joinVirtual } from './resolver.js';

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

/**
 * Walks a folder (links not followed, escaping ones skipped, unreadable folders skipped, folders
 * failing the rules pruned) and yields hits with paths relative to it. Stops when `signal` aborts.
 */
export async function* searchTree(
  access: FileAccess,
  rootReal: string,
  rootVirtual: string,
  query: string,
  signal?: AbortSignal,
): AsyncGenerator<SearchHit> {
  const q = parseQuery(query);
  const prefixLength = rootVirtual === '/' ? 1 : rootVirtual.length + 1;
  const stack: { real: string; virtual: string }[] = [{ real: rootReal, virtual: rootVirtual }];
  while (stack.length > 0) {
    if (signal?.aborted) return;
    const dir = stack.pop() as { real: string; virtual: string };
    let dirents: fs.Dirent[];
    try {
      dirents = await fsp.readdir(dir.real, { withFileTypes: true });
    } catch {
      continue;
    }
    const subdirs: { real: string; virtual: string }[] = [];
    for (const d of dirents) {
      const virtual = joinVirtual(dir.virtual, d.name);
      if (!access.check(virtual)) continue;
      const real = `${dir.real}/${d.name}`;
      let isDir = d.isDirectory();
      if (d.isSymbolicLink()) {
        try {
          const child = await access.scope.resolveChild(dir.real, d.name);
          if (!access.checkResolved({ virtual, real: child.real })) continue;
          isDir = !!child.stat?.isDirectory();
        } catch {
          continue; // a link out of the scope is not part of it
        }
      } else if (isDir) {
        subdirs.push({ real, virtual });
      }
      if (matches(q, d.name)) yield { dir: isDir, path: virtual.slice(prefixLength) };
    }
    // Depth-first in name order, like File Browser's walk.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as { real: string; virtual: string });
  }
}
