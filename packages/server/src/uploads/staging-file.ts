import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, conflict } from '../errors.js';
import { createEntryFile, Pinned, unlinkEntry } from '../files/access/anchor.js';
import type { QuotaHold } from '../files/change/quota-hold.js';
import { replaceCounted } from '../files/change/replace.js';
import { writeBody } from '../files/change/write-body.js';
import { stagingName } from '../files/access/staging-names.js';
import type { StagingLedger } from '../files/change/staging.js';
import type { ReplacedItem } from '../files/access/access.js';
import type { PendingUpload } from '../store/uploads.js';

/*
 * A pending upload's staging file, in the server's own folder: its bytes appended and synced as
 * they arrive, and the finished file put in place of its target in one rename.
 */

/** Written bytes after which a flush to the disk is started in the background. */
const FLUSH_STEP = 4 * 1024 * 1024;

/**
 * Appends a request body to an open staging file at `offset`, at most `room` bytes (more is a
 * 413, and the file is cut back to `offset`); returns the new end. Everything is on the disk
 * (fsync) before it returns, so the offset a client is told survives a crash. The body is
 * written in batches while the next one arrives, with flushes in the background (`writeBody`).
 */
export async function appendBody(
  fh: fs.FileHandle,
  offset: number,
  room: number,
  body: Readable | AsyncIterable<unknown>,
  /**
   * Whether this request still holds the upload (lock-line.ts): once another instance may have
   * taken it over, and put its file in place, not a byte more is written nor anything cut.
   */
  held: () => boolean = () => true,
): Promise<number> {
  let tooLong = false;
  const check = (received: number) => {
    if (!held()) throw interrupted();
    if (received <= room) return;
    tooLong = true;
    throw new AppError('payload_too_large', 'the request body goes past Upload-Length');
  };
  try {
    const written = await writeBody(fh, body, { position: offset, flushEvery: FLUSH_STEP, check });
    await fh.sync();
    return offset + written;
  } catch (err) {
    if (tooLong && held()) await fh.truncate(offset);
    throw err;
  }
}

/** A request of an upload that another instance may have taken over meanwhile. */
export const interrupted = () => conflict('the upload was interrupted: ask for its offset and go on');

/**
 * Renames an upload's finished staging file (in the server's own folder) onto `name` of a pinned
 * folder, counting against `quota` what the rename really replaced (files/replace.ts). Across
 * file systems (EXDEV) the bytes are first copied to a staging file beside the target, so the
 * replacement is still a single rename.
 */
export async function replaceAtomically(
  ledger: StagingLedger,
  stagingDir: string,
  upload: PendingUpload,
  folder: Pinned,
  name: string,
  quota: QuotaHold,
  /** Whether what takes the name meanwhile may be replaced (see `replaceCounted`). */
  replace: boolean,
  beforeRename: () => Promise<void> | void,
  replacedItem: ReplacedItem,
): Promise<void> {
  // The same rename from wherever the finished bytes are: the server's folder or beside the target.
  const putFrom = (from: Pinned, fromName: string) =>
    replaceCounted(quota, from, fromName, folder, name, upload.length, replace, beforeRename, replacedItem);
  const staged = await Pinned.folder(stagingDir);
  try {
    await putFrom(staged, path.basename(upload.staging));
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  } finally {
    await staged.close();
  }
  const temp = stagingName(name);
  const mode = (await fs.stat(upload.staging)).mode & 0o7777;
  const forget = await ledger.note(folder, temp);
  let out: fs.FileHandle;
  try {
    out = await createEntryFile(folder, temp, mode);
  } catch (err) {
    await forget();
    throw err;
  }
  let placed = false;
  try {
    const input = await fs.open(upload.staging, 'r');
    try {
      await pipeline(
        input.createReadStream({ autoClose: false }),
        out.createWriteStream({ autoClose: false }),
      );
    } finally {
      await input.close();
    }
    await out.sync();
    await out.close();
    await putFrom(folder, temp);
    placed = true;
  } finally {
    if (!placed) {
      await out.close().catch(() => undefined);
      await unlinkEntry(folder, temp).catch(() => undefined);
    }
    await forget();
  }
}

/** Removes a staging file, whether or not it is still there. */
export async function removeQuietly(file: string): Promise<void> {
  await fs.rm(file, { force: true }).catch(() => undefined);
}
