import type { SearchHit } from '@filebrowser/contract';
import type { FileAccess } from '../access/access.js';
import type { Pinned } from '../access/anchor.js';
import { KIND_DIR, KIND_LINK, type FolderScan } from '../listing/dir-layout.js';
import { dirReader, type DirReader } from '../listing/dir-snapshot.js';
import { extensionsOfType } from '../listing/mime.js';
import { prepareNameFilter, type NameFilterSpec } from '../listing/name-filter.js';

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

/** A pinned folder shared by the folders still to be opened from it; closed with the last of them. */
class SharedPin {
  private refs = 1;

  constructor(
    readonly pin: Pinned,
    private readonly open: Set<SharedPin>,
  ) {
    open.add(this);
  }

  retain(): void {
    this.refs++;
  }

  async release(): Promise<void> {
    if (--this.refs > 0) return;
    this.open.delete(this);
    await this.pin.close();
  }
}

interface Pending {
  /** The folder it is opened from (undefined for the search root). */
  parent?: SharedPin;
  name: string;
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
 * The root is confined but not rule-checked (contract 7); what the walk finds is.
 *
 * The folders next in line are read ahead (`READ_AHEAD` at a time, and the sub-folders of every
 * folder read, see `MAX_OUTSTANDING`), on the reader threads when the file system is fast: they
 * read, type and match names in parallel, and send back only the sub-folders, links and matching
 * names. Results still come in the walk's order. Every folder is opened from its parent's
 * descriptor without following links and read through its own, and held only until its
 * sub-folders are opened, so nothing outside the tree is ever read. Reads started ahead for a
 * walk that stops early end on their own (they never reject).
 */
export async function* searchTree(
  access: FileAccess,
  rootVirtual: string,
  query: string,
  opts: SearchOptions = {},
): AsyncGenerator<SearchHit> {
  const { signal, dev = 0, reader = dirReader } = opts;
  const filter = prepareNameFilter(parseQuery(query));
  const relativeFrom = rootVirtual === '/' ? 1 : rootVirtual.length + 1;
  const { rules } = access;
  const rootPrefix = rootVirtual.endsWith('/') ? rootVirtual : rootVirtual + '/';
  const root = await access.open(rootVirtual, { rules: false });
  const open = new Set<SharedPin>();
  const inflight = new Set<Promise<unknown>>();
  let stopped = false;
  let outstanding = 0;
  const read = (folder: Pending) => {
    outstanding++;
    const scanned = (async () => {
      if (stopped) return undefined;
      let pin: Pinned | undefined;
      const parent = folder.parent;
      try {
        // On a fast device, opening here costs less than three trips through the thread pool.
        if (parent) {
          pin = (await reader.isFast(dev, parent.pin.real))
            ? parent.pin.lookupSync(folder.name)
            : await parent.pin.lookup(folder.name);
        }
      } finally {
        await parent?.release();
      }
      // The root is the caller's; a folder swapped for a link since its parent was read is skipped.
      const here = folder.parent ? pin : root.node;
      if (!here?.stat.isDirectory()) {
        await pin?.close();
        return undefined;
      }
      const shared = pin ? new SharedPin(pin, open) : undefined;
      try {
        // The size comes with the pin: the reader thread need not look the folder up once more.
        const scan = await reader.scan(here.path, dev, filter, here.stat.size);
        folder.children = [];
        for (let i = 0; i < scan.names.length; i++) {
          const name = scan.names[i]!;
          if (scan.kinds[i] !== KIND_DIR || !rules.checkChild(folder.prefix, name)) continue;
          shared?.retain();
          const child: Pending = {
            ...(shared ? { parent: shared } : { parent: rootShare }),
            name,
            prefix: folder.prefix + name + '/',
          };
          if (!shared) rootShare.retain();
          folder.children.push(child);
          if (outstanding < MAX_OUTSTANDING && !signal?.aborted && !stopped) read(child);
        }
        return scan;
      } finally {
        await shared?.release();
      }
    })().catch(() => undefined); // an unreadable folder is skipped
    folder.scan = scanned;
    inflight.add(scanned);
    scanned.then(
      () => inflight.delete(scanned),
      () => undefined,
    );
  };
  if (!root.node || !root.stat?.isDirectory()) {
    await root.close();
    return;
  }
  // The root's pin belongs to `root`; this share of it only counts the sub-folders opened from it.
  const rootShare = new SharedPin(root.node, new Set());
  rootShare.retain();
  const stack: Pending[] = [{ name: '', prefix: rootPrefix }];
  try {
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
          try {
            const child = await access.resolve(dir.prefix + name);
            isDir = !!child.stat?.isDirectory();
          } catch {
            continue; // a link out of the scope (or hidden by the rules) is not part of it
          }
        }
        if (filter.keep(name)) yield { dir: isDir, path: (dir.prefix + name).slice(relativeFrom) };
      }
      // Depth-first in name order, like File Browser's walk.
      const children = dir.children ?? [];
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  } finally {
    // Reads started ahead for folders never walked: none starts now, the running ones finish
    // (their descriptors must stay open until then), and every pin is let go.
    stopped = true;
    while (inflight.size > 0) await Promise.all([...inflight]);
    for (const shared of [...open]) await shared.pin.close();
    await root.close();
  }
}
