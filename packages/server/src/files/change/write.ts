import type fs from 'node:fs';
import type fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { conflict, forbidden } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  createEntryFile,
  joinReal,
  makeEntryFolder,
  removeEntryFolder,
  renameEntry,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import { replaceCounted } from './replace.js';
import type { Opened } from '../access/resolver.js';
import { stagingName } from '../access/staging-names.js';
import type { StagingLedger } from './staging.js';
import { writeBody } from './write-body.js';

/**
 * Writing one file or making a folder: a file's bytes go to a staging file beside it and one
 * rename puts them in place, so a reader sees the old file or the new one, never half of one.
 */

async function writeAll(fh: fsp.FileHandle, chunk: Buffer): Promise<void> {
  let off = 0;
  while (off < chunk.length) off += (await fh.write(chunk, off, chunk.length - off)).bytesWritten;
}

/** Bytes written between two background flushes of a large upload. */
const FLUSH_EVERY = 64 * 1024 * 1024;

/**
 * How a long copy is followed and stopped (jobs): `done` hears of bytes and entries as they are
 * copied, and the copy waits for it (it may ask whether the work is still allowed); an aborted
 * `signal` stops the copy between two reads, and the copy then removes what it made, as on any
 * failure.
 */
export interface Progress {
  signal?: AbortSignal;
  done?(bytes: number, items: number): Promise<void> | void;
  /**
   * Asked just before anything the work makes lands (a file takes its name, a folder or link is
   * made, a move renames): throws when its caller may no longer do it (`callerOf`), so that a
   * token revoked or a permission withdrawn mid-copy stops it before the next entry appears.
   */
  stillAllowed?(): Promise<unknown>;
  /**
   * Set by a caller metering the work against a quota: a merge then reports the bytes of each
   * entry before it moves (a walk for a folder moved whole), as a copy reports what it copies.
   */
  sizes?: boolean;
}

/** Copies one open file to another with a reused buffer (FileHandle streams can hold the handle open). */
export async function copyHandle(
  input: fsp.FileHandle,
  output: fsp.FileHandle,
  progress: Progress,
): Promise<void> {
  const buf = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    progress.signal?.throwIfAborted();
    const { bytesRead } = await input.read(buf, 0, buf.length, null);
    if (bytesRead === 0) return;
    await writeAll(output, buf.subarray(0, bytesRead));
    await progress.done?.(bytesRead, 0);
  }
}

/** Where an entry goes: its pinned folder, its name, and the folders made on the way (released after). */
export interface Place {
  folder: Pinned;
  name: string;
  release(): Promise<void>;
  /** Removes the folders made on the way (when what was to go in them failed) and releases. */
  undo(): Promise<void>;
}

/** A folder made on the way to a place, with the folder it was made in. */
interface Made {
  parent: Pinned;
  name: string;
  folder: Pinned;
}

/** Removes folders made on the way, deepest first; one that is no longer empty stays. */
async function unmake(made: Made[]): Promise<void> {
  for (const m of made.reverse()) {
    await m.folder.close();
    await removeEntryFolder(m.parent, m.name).catch(() => undefined);
  }
}

/**
 * The pinned folder an opened path belongs in, creating the missing folders on the way (mkdir -p),
 * each inside the one before it: a link planted on the way is refused, never followed.
 */
export async function placeOf(target: Opened, dirMode: number): Promise<Place> {
  if (!target.folder) throw forbidden();
  if (target.blocked) throw conflict('a file stands where a folder would have to be');
  const made: Made[] = [];
  let folder = target.folder;
  try {
    for (const seg of target.missing.slice(0, -1)) {
      if (seg === '..') throw forbidden();
      const parent = folder;
      folder = await makeEntryFolder(parent, seg, dirMode).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? conflict(`${seg} exists and is not a folder`) : err;
      });
      made.push({ parent, name: seg, folder });
    }
  } catch (err) {
    await unmake(made);
    throw err;
  }
  return {
    folder,
    name: target.leaf,
    release: () => closeAll(made.map((m) => m.folder)),
    undo: () => unmake(made),
  };
}

/**
 * Writes a stream into `name` of a pinned folder atomically (architecture, security model 9): into
 * a staging file beside it, fsync, then one rename over the name. A failure removes only the
 * staging file; an existing file stays intact and readable until the rename.
 */
export async function writeInto(
  ledger: StagingLedger,
  folder: Pinned,
  name: string,
  mode: number,
  fill: (fh: fsp.FileHandle) => Promise<void>,
  put: (staging: string, size: number) => Promise<void> = (staging) =>
    renameEntry(folder, staging, folder, name),
): Promise<void> {
  const staging = stagingName(name);
  // Recorded first: a process killed from here on leaves a file the next start removes.
  const forget = await ledger.note(folder, staging);
  let fh: fsp.FileHandle;
  try {
    fh = await createEntryFile(folder, staging, mode);
  } catch (err) {
    await forget();
    throw err;
  }
  let renamed = false;
  try {
    await fill(fh);
    await fh.chmod(mode);
    await fh.sync();
    const { size } = await fh.stat();
    await fh.close();
    await put(staging, size);
    renamed = true;
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await unlinkEntry(folder, staging).catch(() => undefined);
    }
    await forget();
  }
}

/**
 * Writes a request body to an opened path (creating missing folders), replacing a file
 * atomically. `length` is what the body says it holds (Content-Length): the quota is checked for
 * it before anything is made, and for every byte past it as they come.
 */
export async function writeFileAtomic(
  access: FileAccess,
  r: Opened,
  body: Readable,
  opts: {
    fileMode: number;
    dirMode: number;
    length?: number;
    /**
     * Asks again, just before the rename, whether the writer may still write (auth/caller.ts):
     * a body can take long to come, and a session ended, a token revoked, a user removed or a
     * permission withdrawn meanwhile must not see the file land.
     */
    stillAllowed?: () => Promise<unknown>;
    /**
     * Whether a file that takes the name after the request looked may be replaced (the caller
     * asked to replace and may modify); by default only one that was there when it looked.
     */
    replace?: boolean;
  },
): Promise<fs.BigIntStats> {
  if (r.stat?.isDirectory()) throw conflict('a folder exists at this path');
  if (r.stat && !r.stat.isFile()) throw forbidden();
  await access.locks.assertWritable(access, r, { member: !r.linkStat });
  const replaced = r.stat ? r.stat.size : 0;
  const hold = await access.quota.reserve(access, r.real, (opts.length ?? 0) - replaced);
  try {
    const place = await placeOf(r, opts.dirMode);
    try {
      // Keep the mode of a file being replaced, as truncating it in place did.
      const mode = r.stat ? r.stat.mode & 0o7777 : opts.fileMode;
      // A body longer than it said (or that said nothing) is refused at the chunk that no longer fits.
      const check = hold.limited ? (received: number) => hold.need(received - replaced) : undefined;
      const fill = async (fh: fsp.FileHandle) =>
        void (await writeBody(fh, body, { flushEvery: FLUSH_EVERY, check }));
      // The rename counts what it really replaced: the file measured above may be gone by now.
      // A lock taken while the body was coming in holds its last step back (as for tus uploads).
      await writeInto(access.staging, place.folder, place.name, mode, fill, (staging, size) =>
        replaceCounted(
          hold,
          place.folder,
          staging,
          place.folder,
          place.name,
          size,
          opts.replace ?? !!r.linkStat,
          async () => {
            await access.quota.beforeReplace?.(joinReal(place.folder.real, place.name));
            await assertUnmoved(access, place.folder, parentOf(r.virtual));
            await access.locks.assertWritable(access, r, { member: !r.linkStat });
            await opts.stillAllowed?.();
          },
          access.replacedItem,
        ),
      ).catch(async (err: unknown) => {
        await place.undo();
        throw err;
      });
      return await statEntry(place.folder, place.name);
    } finally {
      await place.release();
    }
  } finally {
    hold.release();
  }
}

/** POST on a folder path: mkdir -p (an existing folder is fine, an existing file is a conflict). */
export async function makeDirectory(access: FileAccess, r: Opened, dirMode: number): Promise<void> {
  if (r.stat) {
    if (r.stat.isDirectory()) return;
    throw conflict('a file exists at this path');
  }
  await access.locks.assertWritable(access, r, { member: true });
  const place = await placeOf(r, dirMode);
  try {
    const made = await makeEntryFolder(place.folder, place.name, dirMode).catch(
      (err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? conflict('a file exists at this path') : err;
      },
    );
    await made.close();
  } finally {
    await place.release();
  }
}

/**
 * 409 unless a pinned folder is still where it was reached (`virtual` in `access`): one moved, or
 * deleted into the trash, while a file was written into it would take the file where nothing
 * checked or counted it (a quota it did not hold room in, an item in the trash whose size was
 * recorded without it).
 */
export async function assertUnmoved(access: FileAccess, folder: Pinned, virtual: string): Promise<void> {
  let moved: boolean;
  try {
    moved = (await folder.currentReal()) !== folder.real;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw err;
    // Too deep for the kernel to name: what its path leads to now, walked from the scope.
    const there = await access.open(virtual, { rules: false, followFinal: false }).catch(() => undefined);
    moved = there?.stat?.ino !== folder.stat.ino || there?.stat?.dev !== folder.stat.dev;
    await there?.close();
  }
  if (moved) {
    throw conflict('the folder was moved or deleted while the file was written into it: nothing was saved');
  }
}

/** The virtual path of the folder holding `virtual`. */
function parentOf(virtual: string): string {
  return virtual.slice(0, virtual.lastIndexOf('/')) || '/';
}
