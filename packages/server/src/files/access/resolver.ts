import type fs from 'node:fs';
import path from 'node:path';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { closeAll, isAnchored, joinReal, Pinned, readEntryLink } from './anchor.js';

export { isSpecial } from './anchor.js';

/**
 * The one path resolver (architecture, security model 1). A request path becomes a walk from the
 * scope folder, one component at a time, each opened relative to the folder before it without
 * following links (`anchor.ts`); links are expanded as the kernel would (relative to the folder
 * holding them, absolute ones from `/`) and anything whose real path leaves the scope is refused
 * (403): escaping links as the final component, as an ancestor, dangling ones followed to where
 * they would point. What the walk returns is held open, so the operation that follows acts on the
 * folder and file that were checked, not on whatever the same path names a moment later.
 */

/** Maximum symlinks followed while resolving one path, as File Browser (and Linux's 40, loosely). */
const MAX_HOPS = 255;

export interface CanonicalPath {
  /** `/`-separated, starts with `/`, no `.`/`..`/empty segments, no trailing `/` (except the root). */
  virtual: string;
  segments: string[];
  /** The request ended with `/`: handlers read it as "directory" (contract 1.1). */
  trailingSlash: boolean;
}

/**
 * Canonicalises a decoded request path. NUL and backslashes are refused (a backslash is a path
 * separator on the old server's Windows hosts and a smuggling vector everywhere else), so is any
 * `..` segment: the router already redirects `/../` (contract 1.1), so a `..` here is hostile.
 */
export function canonicalise(raw: string): CanonicalPath {
  if (raw.includes('\0')) throw badRequest('the path contains a NUL character');
  if (raw.includes('\\')) throw badRequest('the path contains a backslash');
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw badRequest('the path contains a ".." segment');
  return { virtual: '/' + segments.join('/'), segments, trailingSlash: raw === '' || raw.endsWith('/') };
}

/** Joins a virtual path and a name (or relative virtual path). */
export function joinVirtual(dir: string, name: string): string {
  const joined = (dir.endsWith('/') ? dir : dir + '/') + name.replace(/^\/+/, '');
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}

export function isInside(parent: string, child: string): boolean {
  if (parent === '/') return child.startsWith('/');
  return child === parent || child.startsWith(parent + '/');
}

/** What a request path names, as found when it was resolved (nothing held open). */
export interface Resolved {
  virtual: string;
  /** Base name; "" for the scope root. */
  name: string;
  trailingSlash: boolean;
  /** The directory entry itself: the real parent folder joined with the name (a link stays a link). */
  entry: string;
  /** The fully resolved real path (for a missing path, where it would be created). */
  real: string;
  /** lstat of `entry`; undefined when nothing is there. */
  linkStat?: fs.Stats;
  /** lstat of `real` (no symlink left in it); undefined when missing or a dangling link. */
  stat?: fs.Stats;
  /** The entry itself is a symbolic link. */
  isSymlink: boolean;
}

/**
 * A resolved path with what was reached held open. Every operation on it goes through these
 * pins (see `anchor.ts`); `close` releases them and must be called once the operation is done.
 */
export interface Opened extends Resolved {
  /** The folder holding `real` (undefined for the scope folder itself). */
  readonly folder?: Pinned;
  /** The name of `real` in `folder` (the link target's name when a final link was followed). */
  readonly leaf: string;
  /** The object at `real`; undefined when nothing is there. */
  readonly node?: Pinned;
  /** Components missing below `folder` (the last one is `leaf`); empty when `real` exists. */
  readonly missing: readonly string[];
  /** A file, not a folder, stands where one of `missing` would have to be a folder. */
  readonly blocked: boolean;
  /** The folder holding the requested link itself, when a final link was followed. */
  readonly linkFolder?: Pinned;
  close(): Promise<void>;
}

/** A resolved path without its pins (for decisions that need no I/O afterwards). */
export function snapshot(o: Opened): Resolved {
  return {
    virtual: o.virtual,
    name: o.name,
    trailingSlash: o.trailingSlash,
    entry: o.entry,
    real: o.real,
    ...(o.linkStat && { linkStat: o.linkStat }),
    ...(o.stat && { stat: o.stat }),
    isSymlink: o.isSymlink,
  };
}

export interface ScopeOptions {
  /** Absolute path of the served root. */
  root: string;
  /** The user's scope: a path under the root (`/`, `/users/bob`; `x` and `./x` mean `/x`). */
  scope: string;
  /** Relax the real-path confinement to lexical confinement (off by default). */
  followExternalSymlinks: boolean;
}

const nonDot = (s: string) => s !== '' && s !== '.';

interface Final {
  folder?: Pinned;
  leaf: string;
  node?: Pinned;
  missing: string[];
  blocked: boolean;
}

/**
 * One walk through the tree: a stack of pinned folders (the top is where the walk is), every pin
 * it opened (released at the end but for what the result keeps), and the link count.
 */
class Walk {
  private readonly stack: Pinned[];
  readonly pins: Pinned[] = [];
  private hops = 0;
  /** The walk left the folders below where it started (`..` past it, or a link to elsewhere). */
  wandered = false;

  constructor(
    private readonly scope: Scope,
    private readonly start: Pinned,
  ) {
    this.stack = [start];
    this.pins.push(start);
  }

  get top(): Pinned {
    return this.stack[this.stack.length - 1]!;
  }

  /** The folder below the top, when the walk came down into the top. */
  get below(): Pinned | undefined {
    return this.stack.length > 1 ? this.stack[this.stack.length - 2] : undefined;
  }

  private async up(): Promise<void> {
    if (this.stack.length > 1) {
      this.stack.pop();
      return;
    }
    if (this.top.real === '/') return;
    this.wandered = true;
    const parent = await this.top.parentFolder();
    this.pins.push(parent);
    this.stack[0] = parent;
  }

  /**
   * Segments of the link `name` in `folder`; an absolute target restarts the walk. Undefined when
   * the entry is no longer a link (it was swapped since it was looked up): look again.
   */
  private async linkTarget(folder: Pinned, name: string): Promise<string[] | undefined> {
    if (++this.hops > MAX_HOPS) throw forbidden('too many levels of symbolic links');
    let target: string;
    try {
      target = await readEntryLink(folder, name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EINVAL' || code === 'ENOENT') return undefined;
      throw err;
    }
    const segments = target.split('/').filter(nonDot);
    if (!target.startsWith('/')) return segments;
    // Links written with the scope's own absolute path (either spelling) restart at the pinned
    // scope folder; anything else is walked from `/` and must come back inside to be accepted.
    for (const prefix of [this.scope.real, this.scope.dir]) {
      const p = prefix.split('/').filter(nonDot);
      if (p.every((s, i) => segments[i] === s)) {
        this.stack.length = 0;
        this.stack.push(this.start);
        return segments.slice(p.length);
      }
    }
    this.wandered = true;
    const slash = await Pinned.folder('/');
    this.pins.push(slash);
    this.stack.length = 0;
    this.stack.push(slash);
    return segments;
  }

  /** Walks `segments` as folders, following every link, up to the first missing or non-folder one. */
  async folders(segments: readonly string[]): Promise<{ missing: string[]; blocked: boolean }> {
    const queue = segments.filter(nonDot);
    while (queue.length > 0) {
      const seg = queue.shift()!;
      if (seg === '..') {
        await this.up();
        continue;
      }
      const node = await this.top.lookup(seg);
      if (!node) return { missing: [seg, ...queue], blocked: false };
      this.pins.push(node);
      if (node.stat.isDirectory()) this.stack.push(node);
      else if (node.stat.isSymbolicLink())
        queue.unshift(...((await this.linkTarget(this.top, seg)) ?? [seg]));
      else return { missing: [seg, ...queue], blocked: true };
    }
    return { missing: [], blocked: false };
  }

  /** Where the link `name` of `folder` leads, through any chain of links. */
  async follow(folder: Pinned, name: string): Promise<Final> {
    let here = folder;
    let leaf = name;
    for (;;) {
      const segments = await this.linkTarget(here, leaf);
      if (segments === undefined) {
        // Swapped since it was looked up: whatever is there now is the answer (or another link).
        const now = await here.lookup(leaf);
        if (!now) return { folder: here, leaf, missing: [leaf], blocked: false };
        this.pins.push(now);
        if (!now.stat.isSymbolicLink()) return { folder: here, leaf, node: now, missing: [], blocked: false };
        continue;
      }
      const last = segments.at(-1);
      if (last === undefined || last === '..') {
        // The target names a folder by its path (`..`, `/`, or the scope folder itself).
        const walked = await this.folders(segments);
        if (walked.missing.length > 0) return this.missingBelow(walked.missing, walked.blocked);
        const node = this.top;
        return { folder: this.below, leaf: path.basename(node.real), node, missing: [], blocked: false };
      }
      const walked = await this.folders(segments.slice(0, -1));
      if (walked.missing.length > 0) return this.missingBelow([...walked.missing, last], walked.blocked);
      here = this.top;
      leaf = last;
      const node = await here.lookup(leaf);
      if (!node) return { folder: here, leaf, missing: [leaf], blocked: false };
      this.pins.push(node);
      if (!node.stat.isSymbolicLink()) return { folder: here, leaf, node, missing: [], blocked: false };
    }
  }

  missingBelow(missing: string[], blocked: boolean): Final {
    return { folder: this.top, leaf: missing.at(-1)!, missing, blocked };
  }

  /** Releases every pin but those kept. */
  async release(keep: ReadonlySet<Pinned | undefined>): Promise<void> {
    await closeAll(this.pins.filter((p) => !keep.has(p)));
  }
}

/** A user's confined view of the disk: where it starts and how far links may lead. */
export class Scope {
  private constructor(
    /** Lexical scope folder (root joined with the scope). */
    readonly dir: string,
    /** Real path of the scope folder: the confinement boundary. */
    readonly real: string,
    /** Real path of the root the scope lies in. */
    readonly rootReal: string,
    readonly followExternalSymlinks: boolean,
    /** Identity of the scope folder: a walk refuses to start from anything else at that path. */
    private readonly identity: { dev: number; ino: number },
  ) {}

  /** Opens a scope (the access module does this; a scope alone grants nothing). */
  static async open(opts: ScopeOptions): Promise<Scope> {
    const scope = path.posix.normalize('/' + opts.scope.replace(/^\.(\/|$)/, '/'));
    const dir = path.join(opts.root, scope);
    // Both opened before either failure counts, so that the one that did open is closed again.
    const [opened, openedRoot] = await Promise.allSettled([Pinned.folder(dir), Pinned.folder(opts.root)]);
    if (opened.status === 'rejected' || openedRoot.status === 'rejected') {
      await closeAll([opened, openedRoot].map((o) => (o.status === 'fulfilled' ? o.value : undefined)));
      const err: unknown =
        opened.status === 'rejected' ? opened.reason : (openedRoot as PromiseRejectedResult).reason;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound();
      throw err;
    }
    const pin = opened.value;
    const rootPin = openedRoot.value;
    try {
      // A scope folder replaced by a link to elsewhere must not widen the user's reach.
      if (!opts.followExternalSymlinks && !isInside(rootPin.real, pin.real)) throw forbidden();
      return new Scope(dir, pin.real, rootPin.real, opts.followExternalSymlinks, {
        dev: pin.stat.dev,
        ino: pin.stat.ino,
      });
    } finally {
      await closeAll([pin, rootPin]);
    }
  }

  /**
   * The scope of a folder already reached through this one (a shared folder): confined to that
   * folder, and bound to the very folder that was pinned, so a link swapped in at its path later
   * is refused rather than followed.
   */
  narrowTo(folder: Pinned): Scope {
    if (!folder.stat.isDirectory() || !this.allows(folder.real)) throw forbidden();
    return new Scope(folder.real, folder.real, this.rootReal, this.followExternalSymlinks, {
      dev: folder.stat.dev,
      ino: folder.stat.ino,
    });
  }

  /** The virtual path of a real path inside the scope, or undefined when it lies outside. */
  virtualOf(realPath: string): string | undefined {
    if (realPath === this.real) return '/';
    if (!isInside(this.real, realPath)) return undefined;
    return this.real === '/' ? realPath : realPath.slice(this.real.length);
  }

  /** True when the confinement allows touching this real path. */
  allows(realPath: string): boolean {
    return this.followExternalSymlinks || isInside(this.real, realPath);
  }

  /** The scope folder, pinned; refused when something else now stands at its path. */
  private async pinStart(): Promise<Pinned> {
    let pin: Pinned;
    try {
      pin = await Pinned.folder(this.real);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound();
      throw err;
    }
    if (pin.stat.dev !== this.identity.dev || pin.stat.ino !== this.identity.ino) {
      await pin.close();
      throw forbidden('the scope folder was replaced');
    }
    return pin;
  }

  /** Resolves a request path; nothing stays open (for decisions that do no I/O afterwards). */
  async resolve(input: string | CanonicalPath, opts: { followFinal?: boolean } = {}): Promise<Resolved> {
    const o = await this.open(input, opts);
    await o.close();
    return snapshot(o);
  }

  /**
   * Resolves a request path (decoded, as routed) and holds what it reached open. With
   * `followFinal: false` a final symlink is not followed: `entry` and `real` are the link itself
   * (delete and move act on links, never on their targets).
   */
  async open(input: string | CanonicalPath, opts: { followFinal?: boolean } = {}): Promise<Opened> {
    const c = typeof input === 'string' ? canonicalise(input) : input;
    const start = await this.pinStart();
    const walk = new Walk(this, start);
    let kept: Set<Pinned | undefined> = new Set();
    try {
      const name = c.segments.at(-1);
      if (name === undefined) {
        kept = new Set([start]);
        return this.opened(c, '', { leaf: '', node: start, missing: [], blocked: false }, undefined, kept);
      }
      const up = await walk.folders(c.segments.slice(0, -1));
      if (up.missing.length > 0) {
        const fin = walk.missingBelow([...up.missing, name], up.blocked);
        await this.confine(walk, fin);
        kept = new Set([fin.folder]);
        return this.opened(c, name, fin, undefined, kept);
      }
      const folder = walk.top;
      const node = await folder.lookup(name);
      if (node) walk.pins.push(node);
      if (!node?.stat.isSymbolicLink() || opts.followFinal === false) {
        const fin: Final = { folder, leaf: name, node, missing: node ? [] : [name], blocked: false };
        await this.confine(walk, fin);
        kept = new Set([folder, node]);
        return this.opened(c, name, fin, undefined, kept);
      }
      const fin = await walk.follow(folder, name);
      await this.confine(walk, fin);
      kept = new Set([fin.folder, fin.node, folder]);
      return this.opened(c, name, fin, { folder, stat: node.stat }, kept);
    } finally {
      await walk.release(kept);
    }
  }

  /** Refuses (403) a result outside the scope, checking the kernel's own name after a detour. */
  private async confine(walk: Walk, fin: Final): Promise<void> {
    const holder = fin.folder ?? fin.node;
    const real = fin.folder ? realOf(fin) : (fin.node?.real ?? this.real);
    if (!this.allows(real) || (holder && !this.allows(holder.real))) throw forbidden();
    if (walk.wandered && isAnchored() && holder && !this.followExternalSymlinks) {
      // Out of the scope and back in through `/` or `..`: the path strings were built step by
      // step; the descriptor says where the walk really is.
      if (!isInside(this.real, await holder.currentReal())) throw forbidden();
    }
  }

  private opened(
    c: CanonicalPath,
    name: string,
    fin: Final,
    link: { folder: Pinned; stat: fs.Stats } | undefined,
    kept: ReadonlySet<Pinned | undefined>,
  ): Opened {
    const real = fin.folder ? realOf(fin) : (fin.node?.real ?? this.real);
    const entry = link ? joinReal(link.folder.real, name) : real;
    const stat = fin.node?.stat;
    const linkStat = link ? link.stat : stat;
    const pins = [...kept];
    return {
      virtual: c.virtual,
      name,
      trailingSlash: c.trailingSlash,
      entry,
      real,
      ...(linkStat && { linkStat }),
      ...(stat && { stat }),
      isSymlink: !!link || !!fin.node?.stat.isSymbolicLink(),
      ...(fin.folder && { folder: fin.folder }),
      leaf: fin.leaf,
      ...(fin.node && { node: fin.node }),
      missing: fin.missing,
      blocked: fin.blocked,
      ...(link && { linkFolder: link.folder }),
      close: () => closeAll(pins),
    };
  }
}

/** The real path of a walk's result: its folder joined with what is (or would be) below it. */
function realOf(fin: Final): string {
  const folder = fin.folder!;
  if (fin.missing.length === 0) return joinReal(folder.real, fin.leaf);
  return path.posix.resolve(folder.real, ...fin.missing);
}
