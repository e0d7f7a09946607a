import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { badRequest, forbidden, notFound } from '../errors.js';

/**
 * The one path resolver (architecture, security model 1). Every file operation turns the request
 * path into a real path through `Scope.resolve`, and refuses (403) anything whose real path leaves
 * the user's scope: escaping symlinks as the final component, as an ancestor, or dangling ones
 * (followed to where they would point). Nothing else in the server joins a user path to the disk.
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

export interface ScopeOptions {
  /** Absolute path of the served root. */
  root: string;
  /** The user's scope: a path under the root (`/`, `/users/bob`; `x` and `./x` mean `/x`). */
  scope: string;
  /** Relax the real-path confinement to lexical confinement (off by default). */
  followExternalSymlinks: boolean;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function lstatOrUndefined(p: string): Promise<fs.Stats | undefined> {
  try {
    return await fsp.lstat(p);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** Named pipes, sockets and devices: listed as `blob`, never opened. */
export function isSpecial(st: fs.Stats): boolean {
  return st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice();
}

interface Walked {
  path: string;
  exists: boolean;
}

/**
 * Follows `segments` from the real directory `base` as the kernel would, one component at a time,
 * expanding symlinks (relative to the folder holding them, or from `/` when absolute). A missing
 * component ends the walk: the rest is joined lexically, which is where a create would land.
 */
async function walk(base: string, segments: readonly string[], hops: { n: number }): Promise<Walked> {
  let cur = base;
  const queue = [...segments];
  while (queue.length > 0) {
    const seg = queue.shift() as string;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      cur = path.dirname(cur);
      continue;
    }
    const next = cur === '/' ? '/' + seg : cur + '/' + seg;
    const st = await lstatOrUndefined(next);
    if (!st) return { path: path.resolve(next, ...queue), exists: false };
    if (st.isSymbolicLink()) {
      if (++hops.n > MAX_HOPS) throw forbidden('too many levels of symbolic links');
      const target = await fsp.readlink(next);
      if (target.startsWith('/')) cur = '/';
      queue.unshift(...target.split('/'));
      continue;
    }
    if (!st.isDirectory() && queue.some((s) => s !== '' && s !== '.')) {
      // A file used as a folder: nothing can exist below it.
      return { path: path.resolve(next, ...queue), exists: false };
    }
    cur = next;
  }
  return { path: cur, exists: true };
}

export function isInside(parent: string, child: string): boolean {
  if (parent === '/') return child.startsWith('/');
  return child === parent || child.startsWith(parent + '/');
}

/** A user's confined view of the disk. Open one per request with `openScope`. */
export class Scope {
  private constructor(
    /** Lexical scope folder (root joined with the scope). */
    readonly dir: string,
    /** Real path of the scope folder: the confinement boundary. */
    readonly real: string,
    readonly followExternalSymlinks: boolean,
  ) {}

  static async open(opts: ScopeOptions): Promise<Scope> {
    const scope = path.posix.normalize('/' + opts.scope.replace(/^\.(\/|$)/, '/'));
    const dir = path.join(opts.root, scope);
    let real: string;
    let rootReal: string;
    try {
      [real, rootReal] = await Promise.all([fsp.realpath(dir), fsp.realpath(opts.root)]);
    } catch (err) {
      if (isMissing(err)) throw notFound();
      throw err;
    }
    // A scope folder replaced by a link to elsewhere must not widen the user's reach.
    if (!opts.followExternalSymlinks && !isInside(rootReal, real)) throw forbidden();
    return new Scope(dir, real, opts.followExternalSymlinks);
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

  private assertAllowed(realPath: string): void {
    if (!this.allows(realPath)) throw forbidden();
  }

  /**
   * Resolves a request path (decoded, as routed) to its real path. With `followFinal: false` a
   * final symlink is not followed: `entry` and `real` are the link itself (delete and move act on
   * links, never on their targets).
   */
  async resolve(input: string | CanonicalPath, opts: { followFinal?: boolean } = {}): Promise<Resolved> {
    const c = typeof input === 'string' ? canonicalise(input) : input;
    const name = c.segments.at(-1);
    if (name === undefined) {
      const st = await fsp.lstat(this.real);
      return {
        virtual: '/',
        name: '',
        trailingSlash: c.trailingSlash,
        entry: this.real,
        real: this.real,
        linkStat: st,
        stat: st,
        isSymlink: false,
      };
    }
    const hops = { n: 0 };
    const parent = await walk(this.real, c.segments.slice(0, -1), hops);
    this.assertAllowed(parent.path);
    const entry = parent.path === '/' ? '/' + name : parent.path + '/' + name;
    const linkStat = parent.exists ? await lstatOrUndefined(entry) : undefined;
    const isSymlink = !!linkStat?.isSymbolicLink();
    let real = entry;
    let stat = linkStat;
    if (isSymlink && opts.followFinal !== false) {
      const target = await walk(parent.path, [name], hops);
      this.assertAllowed(target.path);
      real = target.path;
      stat = target.exists ? await lstatOrUndefined(real) : undefined;
    }
    return {
      virtual: c.virtual,
      name,
      trailingSlash: c.trailingSlash,
      entry,
      real,
      linkStat,
      stat,
      isSymlink,
    };
  }

  /**
   * Resolves one entry of a real folder already known to be allowed (listings, walks): cheap for
   * plain entries, follows and confines symlinks. Throws 403 for an escaping link.
   */
  async resolveChild(
    dirReal: string,
    name: string,
    linkStat?: fs.Stats,
  ): Promise<Omit<Resolved, 'virtual' | 'trailingSlash'>> {
    const entry = dirReal === '/' ? '/' + name : dirReal + '/' + name;
    const ls = linkStat ?? (await fsp.lstat(entry));
    if (!ls.isSymbolicLink()) return { name, entry, real: entry, linkStat: ls, stat: ls, isSymlink: false };
    const target = await walk(dirReal, [name], { n: 0 });
    this.assertAllowed(target.path);
    const stat = target.exists ? await lstatOrUndefined(target.path) : undefined;
    return { name, entry, real: target.path, linkStat: ls, stat, isSymlink: true };
  }
}

/** Opens a scope for a user. */
export function openScope(opts: ScopeOptions): Promise<Scope> {
  return Scope.open(opts);
}

/**
 * Opens a resolved regular file for reading without following a link swapped in since it was
 * resolved, and without blocking on a FIFO swapped in; anything but a regular file is refused.
 */
export async function openRegularFile(realPath: string): Promise<fsp.FileHandle> {
  const fh = await fsp.open(
    realPath,
    fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK,
  );
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw forbidden();
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}
