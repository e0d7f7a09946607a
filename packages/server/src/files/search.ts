import type { SearchHit } from '@filebrowser/contract';
import type { FileAccess } from './access.js';
import { dirReader, KIND_DIR, KIND_LINK, type DirReader, type FolderScan } from './dir-snapshot.js';
import { extensionsOfType } from './mime.js';
import { prepareNameFilter, type NameFilterSpec } from './name-filter.js';

const MEDIA_TYPES: Record<string, string> = {
  image: 'image',
  audio: 'audio',
  music: 'audio',
  video: 'video',
};

/** The query syntax of contract 7, processed in the same order as File Browser. */
export function parseQuery(query: string): NameFilterSpec {
  const caseSensitive = /case:sensitive/.test(query);
  let rest = query.replace(/case:(sensitive|insensitive)/g, '').trim();
  const types: NameFilterSpec['types'] = [];
  for (const m of rest.matchAll(/type:(\w+)/g)) {
    const word = m[1] as string;
    const media = MEDIA_TYPES[word];
    types.push(media ? { extensions: extensionsOfType(media) } : { suffix: '.' + word });
  }
  rest = rest.replace(/type:\w+/g, '');
  if (!caseSensitive) rest = rest.toLowerCase();
  rest = rest.trim();
  let terms: string[] = [];
  if (rest.length >= 2 && rest.startsWith('"') && rest.endsWith('"')) terms = [rest.slice(1, -1)];
  else if (rest !== '') terms = rest.split(' ');
  return { caseSensitive, types, terms };
}

/**
 * Folders read ahead of the walk (on reader threads, or the thread pool) while earlier ones are
 * matched. Deep enough that each reader thread has a few milliseconds of folders queued: on a
 * machine with as many busy threads as cores, the main thread may wait that long for its turn
 * to hand out more (8 left the readers idle a third of the time on 2 cores; 24 did not).
 */
const READ_AHEAD = 24;
/**
 * Besides those, the sub-folders of a folder just read are read at once, up to this many
 * folders read and not yet walked: in a tree of narrow folders (each holding one folder), the
 * next folder is only known when its parent is read, and reading it only when the walk gets
 * there would leave the readers waiting on the main thread at every step.
 */
const MAX_OUTSTANDING = 64;

interface Pending {
  real: string;
  /** Virtual path with a trailing slash. */
  prefix: string;
  scan?: Promise<FolderScan | undefined>;
  /** The sub-folders the rules let the walk into, known once `scan` is done. */
  children?: Pending[];
}

export interface SearchOptions {
  signal?: AbortSignal;
  /** The device of the search root, for the reader's choice of thread (see `DirReader`). */
  dev?: number | bigint;
  reader?: DirReader;
}

/**
 * Walks a folder (links not followed, escaping ones skipped, unreadable folders skipped, folders
 * failing the rules pruned) and yields hits with paths relative to it. Stops when `signal` aborts.
 *
 * The folders next in line are read ahead (`READ_AHEAD` at a time, and the sub-folders of every
 * folder read, see `MAX_OUTSTANDING`), on the reader threads when the file system is fast: they
 * read, type and match names in parallel, and send back only the sub-folders, links and matching
 * names. Results still come in the walk's order. Reads started ahead for a walk that stops early
 * end on their own (they never reject).
 */
export async function* searchTree(
  access: FileAccess,
  rootReal: string,
  rootVirtual: string,
  query: string,
  opts: SearchOptions = {},
): AsyncGenerator<SearchHit> {
  const { signal, dev = 0, reader = dirReader } = opts;
  const filter = prepareNameFilter(parseQuery(query));
  const relativeFrom = rootVirtual === '/' ? 1 : rootVirtual.length + 1;
  const { rules } = access;
  const rootPrefix = rootVirtual.endsWith('/') ? rootVirtual : rootVirtual + '/';
  let outstanding = 0;
  const read = (folder: Pending) => {
    outstanding++;
    folder.scan = reader.scan(folder.real, dev, filter).then(
      (scan) => {
        const realPrefix = folder.real === '/' ? '/' : folder.real + '/';
        folder.children = [];
        for (let i = 0; i < scan.names.length; i++) {
          const name = scan.names[i]!;
          if (scan.kinds[i] !== KIND_DIR || !rules.checkChild(folder.prefix, name)) continue;
          const child: Pending = { real: realPrefix + name, prefix: folder.prefix + name + '/' };
          folder.children.push(child);
          if (outstanding < MAX_OUTSTANDING && !signal?.aborted) read(child);
        }
        return scan;
      },
      () => undefined, // an unreadable folder is skipped
    );
  };
  const stack: Pending[] = [{ real: rootReal, prefix: rootPrefix }];
  while (stack.length > 0) {
    if (signal?.aborted) return;
    for (let i = stack.length - 1, n = 0; i >= 0 && n < READ_AHEAD; i--, n++) {
      if (!stack[i]!.scan) read(stack[i]!);
    }
    const dir = stack.pop()!;
    const scan = await dir.scan;
    outstanding--;
    if (!scan) continue;
    const { names, kinds } = scan;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (!rules.checkChild(dir.prefix, name)) continue;
      let isDir = kinds[i] === KIND_DIR;
      if (kinds[i] === KIND_LINK) {
        const virtual = dir.prefix + name;
        try {
          const child = await access.scope.resolveChild(dir.real, name);
          if (!access.checkResolved({ virtual, real: child.real })) continue;
          isDir = !!child.stat?.isDirectory();
        } catch {
          continue; // a link out of the scope is not part of it
        }
      }
      if (filter.keep(name)) yield { dir: isDir, path: (dir.prefix + name).slice(relativeFrom) };
    }
    // Depth-first in name order, like File Browser's walk.
    const children = dir.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}
