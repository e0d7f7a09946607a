import fs, { constants as C } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { forbidden } from '../../errors.js';
import { nativeAddon, type FolderStats } from '../listing/native.js';

/**
 * Descriptor-anchored access to the served folders (architecture, security model 1).
 *
 * Checking a path and then opening it by the same path leaves a window in which any folder on
 * the way can be exchanged for a symbolic link to somewhere else (`renameat2(RENAME_EXCHANGE)`),
 * and `O_NOFOLLOW` guards only the last component. So folders are held open: each component is
 * opened with `O_PATH | O_NOFOLLOW` relative to the folder before it, and every later call names
 * its file through the descriptor of the folder holding it (`/proc/self/fd/N/name`). The kernel
 * resolves `/proc/self/fd/N` to the very folder that was opened and checked, whatever has been
 * renamed since, so a swapped ancestor changes nothing, and the last component is opened with
 * `O_NOFOLLOW` or created with `O_EXCL`. A file opened for reading is reopened through its own
 * `O_PATH` descriptor, so exactly the inode that was checked is read.
 *
 * Where `/proc/self/fd` does not work (not Linux, no procfs) the same code runs on path strings:
 * the checks are the same, but a swap between check and use is not excluded (docs/security.md).
 */

/** Linux's O_PATH (the same value on every architecture Node runs on). */
const O_PATH = 0o10000000;

/**
 * The folder of this process's descriptors. `/proc/<pid>/fd` where it names our own (it does
 * unless procfs belongs to another PID namespace): every entry a listing stats goes through it,
 * and `/proc/self` is one more link for the kernel to follow, a fifth of the lookup's extra cost
 * (bench/results/2026-11-23-first-full-runs-and-where-the-time-went.md).
 */
let fdFolder = '/proc/self/fd';

function probeAnchoring(): boolean {
  if (process.platform !== 'linux') return false;
  let fd: number | undefined;
  try {
    fd = fs.openSync('/', O_PATH | C.O_DIRECTORY);
    const viaFd = fs.statSync(`/proc/self/fd/${fd}/.`);
    const direct = fs.statSync('/');
    if (viaFd.ino !== direct.ino || viaFd.dev !== direct.dev) return false;
    // `/proc/self` names our process by the number procfs knows it by: only when that is our own
    // PID is `/proc/<pid>` ourselves and not a process of another namespace.
    const own = fs.readlinkSync('/proc/self') === String(process.pid);
    fdFolder = own ? `/proc/${process.pid}/fd` : '/proc/self/fd';
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

let anchored = probeAnchoring();

/**
 * A path the kernel resolves to an open descriptor (`isAnchored()` says whether it works), for
 * pins and for readers that take a file name (sharp, ffmpeg). `holder: 'child'` names the
 * descriptor a child process was handed as its own number `fd`: the child resolves the path
 * itself, so it must be `/proc/self/fd/<fd>` (`/proc/<our pid>` would be our descriptor `fd`).
 */
export function descriptorPath(fd: number, holder: 'self' | 'child' = 'self'): string {
  return holder === 'child' ? `/proc/self/fd/${fd}` : `${fdFolder}/${fd}`;
}

/** Whether folders are held by descriptor (true on Linux with /proc) or named by path. */
export function isAnchored(): boolean {
  return anchored;
}

/** Tests run the path-string fallback too; returns a function that restores the detected mode. */
export function useAnchoringForTests(on: boolean): () => void {
  const before = anchored;
  anchored = on && probeAnchoring();
  return () => {
    anchored = before;
  };
}

let pinsOpen = 0;

/** Pins not closed yet: tests assert it returns to where it was (no descriptor leaks). */
export function openPinCount(): number {
  return pinsOpen;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Named pipes, sockets and devices: listed as `blob`, never opened. */
export function isSpecial(st: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): boolean {
  return st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice();
}

type Handle = fsp.FileHandle | number;

/** A system call of a lookup (see `Pinned.lookupCalls`); `open` is `O_PATH | O_NOFOLLOW`. */
type LookupCall =
  | { call: 'lstat'; path: string }
  | { call: 'open'; path: string }
  | { call: 'fstat'; handle: Handle }
  | { call: 'close'; handle: Handle };

/** Makes a lookup's calls through the thread pool (a descriptor is a `FileHandle`). */
async function runAsync<T>(calls: Generator<LookupCall, T, unknown>): Promise<T> {
  let step = calls.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = await makeCall(step.value);
    } catch (err) {
      step = calls.throw(err);
      continue;
    }
    step = calls.next(result);
  }
  return step.value;
}

function makeCall(c: LookupCall): Promise<unknown> {
  switch (c.call) {
    case 'lstat':
      return fsp.lstat(c.path);
    case 'open':
      return fsp.open(c.path, O_PATH | C.O_NOFOLLOW);
    case 'fstat':
      return (c.handle as fsp.FileHandle).stat();
    case 'close':
      return (c.handle as fsp.FileHandle).close();
  }
}

/** Makes a lookup's calls on this thread (a descriptor is a plain number). */
function runSync<T>(calls: Generator<LookupCall, T, unknown>): T {
  let step = calls.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = makeCallSync(step.value);
    } catch (err) {
      step = calls.throw(err);
      continue;
    }
    step = calls.next(result);
  }
  return step.value;
}

function makeCallSync(c: LookupCall): unknown {
  switch (c.call) {
    case 'lstat':
      return fs.lstatSync(c.path);
    case 'open':
      return fs.openSync(c.path, O_PATH | C.O_NOFOLLOW);
    case 'fstat':
      return fs.fstatSync(c.handle as number);
    case 'close':
      return fs.closeSync(c.handle as number);
  }
}

let lookupWatcher: ((real: string) => void) | undefined;

/**
 * Tests see every entry looked up (its real path) until the returned stop: a walk that must not
 * start is seen to open no folder, on any mount (access times may not move: `noatime`).
 */
export function watchLookupsForTests(watch: (real: string) => void): () => void {
  lookupWatcher = watch;
  return () => {
    if (lookupWatcher === watch) lookupWatcher = undefined;
  };
}

/**
 * One file-system object held open (a folder, a file, a special file or a symbolic link itself),
 * with the real path it had when it was reached. Folders name their entries through `child`.
 */
export class Pinned {
  /** A descriptor of `lookupSync` is a plain number, closed synchronously (see there). */
  private handle: Handle | undefined;
  private closed = false;

  private constructor(
    handle: Handle | undefined,
    /** Where it was reached, from the file-system root. */
    readonly real: string,
    /** lstat of the object itself (a link's own stat for a link). */
    readonly stat: fs.Stats,
  ) {
    this.handle = handle;
    if (handle !== undefined) pinsOpen++;
  }

  /**
   * Opens a folder given by a trusted absolute path (a scope folder, the file-system root):
   * links in that path are followed, which is why only configuration may name one.
   */
  static async folder(dirPath: string): Promise<Pinned> {
    if (!anchored) {
      const real = await fsp.realpath(dirPath);
      const st = await fsp.lstat(real);
      if (!st.isDirectory()) throw Object.assign(new Error(`not a folder: ${dirPath}`), { code: 'ENOTDIR' });
      return new Pinned(undefined, real, st);
    }
    const fh = await fsp.open(dirPath, O_PATH | C.O_DIRECTORY);
    try {
      const st = await fh.stat();
      // The kernel's name for what was opened: no window between a realpath and the open.
      const real = await fsp.readlink(descriptorPath(fh.fd));
      return new Pinned(fh, real, st);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** The entry `name` of this folder, not following a final link; undefined when there is none. */
  lookup(name: string): Promise<Pinned | undefined> {
    return runAsync(this.lookupCalls(name));
  }

  /**
   * `lookup` in three system calls on this thread instead of three trips through the thread pool,
   * for a walk that opens many folders on a fast local device (the caller asks `AdaptiveIo`): 2,400
   * such trips for the 800 folders of the bench's search tree cost 60–80 ms of CPU per search
   * (bench/results/2026-11-23-first-full-runs-and-where-the-time-went.md). Opening with `O_PATH` reads nothing of the file, and closing
   * such a descriptor writes nothing back, so its `close` is synchronous too.
   */
  lookupSync(name: string): Pinned | undefined {
    return runSync(this.lookupCalls(name));
  }

  /**
   * What `lookup` and `lookupSync` both do, as the system calls it needs: each runner makes them
   * its own way (thread pool or this thread), so the checks between them are written once.
   */
  private *lookupCalls(name: string): Generator<LookupCall, Pinned | undefined, unknown> {
    const child = this.child(name);
    const real = joinReal(this.real, name);
    lookupWatcher?.(real);
    if (!anchored) {
      try {
        return new Pinned(undefined, real, (yield { call: 'lstat', path: child }) as fs.Stats);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    }
    let handle: Handle;
    try {
      handle = (yield { call: 'open', path: child }) as Handle;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    try {
      return new Pinned(handle, real, (yield { call: 'fstat', handle }) as fs.Stats);
    } catch (err) {
      yield { call: 'close', handle };
      throw err;
    }
  }

  /** The object's stat as it is now (`stat` is as it was when opened; a folder's times move as entries come and go). */
  statNow(): Promise<fs.Stats> {
    return this.handle !== undefined ? fsp.stat(this.path) : fsp.lstat(this.real);
  }

  /** The folder above this one, as the kernel finds it (for `..` past where a walk started). */
  async parentFolder(): Promise<Pinned> {
    const real = path.dirname(this.real);
    if (!anchored) return new Pinned(undefined, real, await fsp.lstat(real));
    const fh = await fsp.open(this.child('..'), O_PATH | C.O_DIRECTORY);
    try {
      return new Pinned(fh, await fsp.readlink(descriptorPath(fh.fd)), await fh.stat());
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** A path the kernel resolves to this object itself. */
  get path(): string {
    this.assertOpen();
    return this.handle !== undefined ? descriptorPath(this.fd) : this.real;
  }

  /** A path the kernel resolves to the entry `name` of this folder (no component before it is looked up again). */
  child(name: string): string {
    this.assertOpen();
    if (name === '' || name === '.' || name.includes('/') || name.includes('\0')) {
      throw forbidden(`not a file name: ${JSON.stringify(name)}`);
    }
    return this.handle !== undefined ? `${descriptorPath(this.fd)}/${name}` : joinReal(this.real, name);
  }

  /**
   * The descriptor itself, for a child process that must reach this very object whatever its
   * path leads to meanwhile (the runner's sandbox binds the scope from it): valid until `close`,
   * undefined in path mode.
   */
  get descriptor(): number | undefined {
    this.assertOpen();
    return this.handle === undefined ? undefined : this.fd;
  }

  private get fd(): number {
    const h = this.handle!;
    return typeof h === 'number' ? h : h.fd;
  }

  /** lstat of the object itself with nanoseconds (fstat of its descriptor when anchored). */
  async statNs(): Promise<fs.BigIntStats> {
    this.assertOpen();
    const h = this.handle;
    if (typeof h === 'number') return fs.fstatSync(h, { bigint: true });
    return h ? h.stat({ bigint: true }) : fsp.lstat(this.real, { bigint: true });
  }

  /**
   * This folder's entries with the lstat of each, read in C on the thread pool relative to this
   * very descriptor (native.ts): every name is stat'ed with `fstatat` on the pin, never turned
   * back into a path, and no entry costs a walk through procfs. Undefined where that way is not
   * available (no addon, `FB_NATIVE=off`, path mode): the caller reads through `path` then.
   */
  /** Whether `nativeEntries` reads this folder (the addon is loaded and the pin holds a descriptor). */
  get readsNatively(): boolean {
    return nativeAddon() !== undefined && this.handle !== undefined;
  }

  nativeEntries(): Promise<FolderStats> | undefined {
    this.assertOpen();
    const addon = nativeAddon();
    if (!addon || this.handle === undefined) return undefined;
    return addon.readFolderStats(this.fd);
  }

  /** The kernel's current name of this object (anchored mode), to check where a walk ended up. */
  async currentReal(): Promise<string> {
    if (this.handle === undefined) return this.real;
    return fsp.readlink(this.path);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('file-system object used after it was released');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const fh = this.handle;
    this.handle = undefined;
    if (fh === undefined) return;
    pinsOpen--;
    if (typeof fh === 'number') fs.closeSync(fh);
    else await fh.close();
  }
}

export function joinReal(dir: string, name: string): string {
  return dir === '/' ? '/' + name : dir + '/' + name;
}

/** Closes pins, ignoring the ones already closed. */
export async function closeAll(pins: Iterable<Pinned | undefined>): Promise<void> {
  for (const p of pins) if (p) await p.close();
}

/**
 * Opens a pinned regular file for reading: through its own descriptor in anchored mode (the inode
 * that was checked), with `O_NOFOLLOW` otherwise. Anything but a regular file is refused (403),
 * and a named pipe is never waited on.
 */
export async function openPinnedFile(node: Pinned, flags: number = C.O_RDONLY): Promise<fsp.FileHandle> {
  if (!node.stat.isFile()) throw forbidden();
  // `/proc/self/fd/N` is itself a link (to the very inode held): it must be followed, so
  // O_NOFOLLOW only applies when the path is the file's own name.
  const noFollow = isAnchored() ? 0 : C.O_NOFOLLOW;
  const fh = await fsp.open(node.path, flags | noFollow | C.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.ino !== node.stat.ino || st.dev !== node.stat.dev) throw forbidden();
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** Opens the entry `name` of a pinned folder as a regular file (no link followed, no pipe waited on). */
export async function openEntryFile(
  folder: Pinned,
  name: string,
  flags: number = C.O_RDONLY,
): Promise<fsp.FileHandle> {
  const fh = await fsp.open(folder.child(name), flags | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    if (!(await fh.stat()).isFile()) throw forbidden();
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** Synchronous `openEntryFile` for the listing's fast path (the caller closes the descriptor). */
export function openEntryFileSync(folder: Pinned, name: string): number {
  const fd = fs.openSync(folder.child(name), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw forbidden();
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * Reads the regular file `name` of a pinned folder from its start into `into`, synchronously (the
 * archive's fast path for small files on fast devices); returns the bytes read, fewer at its end.
 */
export function readEntryFileSync(folder: Pinned, name: string, into: Buffer): number {
  const fd = openEntryFileSync(folder, name);
  try {
    let done = 0;
    while (done < into.length) {
      const n = fs.readSync(fd, into, done, into.length - done, done);
      if (n === 0) break;
      done += n;
    }
    return done;
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates a new file `name` in a pinned folder; fails when anything (a link included) is there. */
export function createEntryFile(folder: Pinned, name: string, mode: number): Promise<fsp.FileHandle> {
  return fsp.open(folder.child(name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
}

/** Creates the folder `name` in a pinned folder and pins it (refusing a link swapped in meanwhile). */
export async function makeEntryFolder(folder: Pinned, name: string, mode: number): Promise<Pinned> {
  try {
    await fsp.mkdir(folder.child(name), { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const made = await folder.lookup(name);
  if (!made?.stat.isDirectory()) {
    await made?.close();
    throw Object.assign(new Error(`${name} exists and is not a folder`), { code: 'EEXIST' });
  }
  return made;
}

/** Renames an entry between pinned folders (never following a link at either end). */
export function renameEntry(from: Pinned, fromName: string, to: Pinned, toName: string): Promise<void> {
  return fsp.rename(from.child(fromName), to.child(toName));
}

/** `renameat2` flags (linux/fs.h). */
const RENAME_NOREPLACE = 1;
const RENAME_EXCHANGE = 2;

/** Errors of a rename flag the kernel or the file system does not know (the caller does without). */
function flagUnsupported(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EINVAL' || code === 'ENOSYS' || code === 'EOPNOTSUPP' || code === 'ENOTSUP';
}

/**
 * Moves an entry to `toName` of a pinned folder only while that name is free: `EEXIST` when
 * anything (a link included) is there, whatever appeared since the caller looked. With the
 * addon, `renameat2(RENAME_NOREPLACE)`; without it, a hard link (which never replaces) then the
 * unlink of the old name, for regular files. Answers false where neither works on this file
 * system: the caller has no way but a plain rename.
 */
export async function renameEntryNoReplace(
  from: Pinned,
  fromName: string,
  to: Pinned,
  toName: string,
): Promise<boolean> {
  const rename2 = nativeAddon()?.renameEntry;
  if (rename2) {
    try {
      await rename2(from.child(fromName), to.child(toName), RENAME_NOREPLACE);
      return true;
    } catch (err) {
      if (!flagUnsupported(err)) throw err;
    }
  }
  try {
    await fsp.link(from.child(fromName), to.child(toName));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'EMLINK' || flagUnsupported(err)) return false;
    throw err;
  }
  await fsp.unlink(from.child(fromName));
  return true;
}

/**
 * Exchanges two entries in one step (`renameat2(RENAME_EXCHANGE)`): each name then holds what the
 * other held at that moment, so the caller learns exactly what stood at a name when it put its
 * own entry there. `ENOENT` when either is missing. Answers false where the addon or the file
 * system cannot.
 */
export async function exchangeEntries(a: Pinned, aName: string, b: Pinned, bName: string): Promise<boolean> {
  const rename2 = nativeAddon()?.renameEntry;
  if (!rename2) return false;
  try {
    await rename2(a.child(aName), b.child(bName), RENAME_EXCHANGE);
    return true;
  } catch (err) {
    // Across file systems nothing can be exchanged: the caller does without, as without the flag.
    if (flagUnsupported(err) || (err as NodeJS.ErrnoException).code === 'EXDEV') return false;
    throw err;
  }
}

/** Removes an entry that is not a folder (a link is removed itself). */
export function unlinkEntry(folder: Pinned, name: string): Promise<void> {
  return fsp.unlink(folder.child(name));
}

/** Removes an empty folder entry (a link swapped in is refused by the kernel: ENOTDIR). */
export function removeEntryFolder(folder: Pinned, name: string): Promise<void> {
  return fsp.rmdir(folder.child(name));
}

/** Creates the symbolic link `name` in a pinned folder (its target is stored, never followed here). */
export function makeEntryLink(folder: Pinned, name: string, target: string): Promise<void> {
  return fsp.symlink(target, folder.child(name));
}

/** Reads the target of the link `name` in a pinned folder. */
export function readEntryLink(folder: Pinned, name: string): Promise<string> {
  return fsp.readlink(folder.child(name));
}

/** The names in a pinned folder. */
export function readFolder(folder: Pinned): Promise<string[]> {
  return fsp.readdir(folder.path);
}

/** The entries of a pinned folder with their types (from the folder itself, no stat each). */
export function readFolderTypes(folder: Pinned): Promise<fs.Dirent[]> {
  return fsp.readdir(folder.path, { withFileTypes: true });
}

/** lstat of the entry `name` of a pinned folder. */
export function statEntry(folder: Pinned, name: string): Promise<fs.BigIntStats> {
  return fsp.lstat(folder.child(name), { bigint: true });
}

/** statfs of the file system holding a pinned folder. */
export function statFileSystem(node: Pinned): Promise<fs.StatsFs> {
  return fsp.statfs(node.path);
}
