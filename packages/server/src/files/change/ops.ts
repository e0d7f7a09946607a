import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { ChecksumAlgorithm, Usage } from '@filebrowser/contract';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import { openPinnedFile, statFileSystem } from '../access/anchor.js';
import { bytesOf, measureOpened, unsettledMeasure, type Measured } from './measure.js';
import type { Replacement, ReplaceMode, ReplaceStep } from './replace.js';
import { isInside, type Opened } from '../access/resolver.js';
import { removeTree, walkTree } from '../access/tree.js';
import { movePath } from './move.js';
import type { QuotaHold } from './quota-hold.js';
import { renameInto } from './rename-into.js';
import { copyPath, freeDestination } from './transfer.js';
import type { Progress } from './write.js';

/**
 * The operations routes call on entries: delete, copy or move under the quotas (with what a
 * replaced destination does), checksums and usage.
 */

/** Every descendant (and its mirror under `mirror`, when given) must pass the rules (contract 1.7). */
export async function checkDescendants(
  access: FileAccess,
  src: Opened,
  follow: boolean,
  mirror?: string,
): Promise<void> {
  if (!access.rules.hasRules || !src.stat?.isDirectory() || !src.node) return;
  for await (const e of walkTree(access, src.node, src.virtual, { follow })) {
    if (!access.rulesAllowResolved(e.virtual, e.real)) throw forbidden();
    if (mirror && !access.rules.allowedByRules(mirror + e.virtual.slice(src.virtual.length)))
      throw forbidden();
  }
}

/**
 * What a delete may remove: the scope itself never, every descendant must pass the rules, and
 * no lock of someone else may cover it or anything in it.
 */
export async function assertDeletable(access: FileAccess, r: Opened): Promise<void> {
  if (r.virtual === '/' || !r.folder) throw forbidden();
  if (!r.linkStat) throw notFound();
  await access.locks.assertWritable(access, r, { deep: true, member: true });
  await checkDescendants(access, r, false);
}

/** DELETE: the link itself when the path is a link; the whole tree otherwise (descendants checked). */
export async function deletePath(access: FileAccess, r: Opened): Promise<void> {
  await assertDeletable(access, r);
  await removeCounted(access, r);
}

/** Removes what an opened path names (a link itself), taking its bytes off the counted scopes. */
export async function removeCounted(access: FileAccess, r: Opened): Promise<void> {
  const hold = await access.quota.holdFor(access, r.entry);
  const size = hold.active ? await bytesOf(access, r.isSymlink ? { virtual: r.virtual } : r, false) : 0;
  try {
    await removeTree(r.folder!, r.leaf);
    await hold.commit(-size);
  } finally {
    hold.release();
  }
}

/**
 * `copyPath` under the quotas covering the destination: the copy's size (what replaced files
 * held given back) is checked before the first byte; what it really added is counted after.
 * An entry that gives way whole (`replacement` of kind `delete`) goes only once that check passed.
 */
async function copyCounted(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress,
  replacement: Replacement | undefined,
): Promise<void> {
  const replacing = replacement?.kind === 'delete';
  const hold = await access.quota.holdFor(access, dst.real);
  let target = dst;
  try {
    let before = 0;
    let given = 0;
    let size = 0;
    if (hold.active) {
      before = replacing ? 0 : await bytesOf(access, dst, false);
      size = await bytesOf(access, src, true);
      // A merge keeps what it does not replace: only a replaced file gives its bytes back, and
      // an entry deleted for good gives back all of it (one in the trash still counts).
      given = replacing ? replacement.freed : dst.stat?.isFile() ? before : 0;
      await hold.need(size - given);
    }
    if (replacing) {
      await replacement.apply();
      target = await access.open(dst.virtual, { followFinal: false });
    }
    // The source may grow while it is copied (a file written, a folder moved into it): past
    // what was measured, every byte copied is checked against the quotas before it lands.
    let copied = 0;
    const metered: Progress = !hold.limited
      ? progress
      : {
          ...progress,
          done: async (bytes, items) => {
            copied += bytes;
            if (copied > size) await hold.need(copied - given);
            await progress.done?.(bytes, items);
          },
        };
    await copyPath(access, src, target, dirMode, metered);
    if (hold.active) {
      const after = await access.open(dst.virtual, { rules: false });
      try {
        // One walk: not settled (changed under it), it may have missed what the copy wrote, which
        // the meter knows.
        const measured = await measureOpened(access, after, false, 1);
        const added = measured.bytes - before;
        await hold.commit(measured.settled ? added : Math.max(added, copied - given));
      } finally {
        await after.close();
      }
    }
  } finally {
    hold.release();
    if (target !== dst) await target.close();
  }
}

/**
 * `movePath` under the quotas: a move within the scopes it stays in changes nothing; into a
 * scope with a quota it is checked like a copy, and counted out of the scopes it leaves. An
 * entry that gives way whole goes only once that check passed.
 */
async function moveCounted(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress,
  replacement: Replacement | undefined,
): Promise<void> {
  const replacing = replacement?.kind === 'delete';
  const hold = await access.quota.holdFor(access, dst.entry, src.entry);
  // A rename over a file replaces it; over a folder it merges (see movePath), nothing given back.
  const overwritten =
    !replacing && dst.linkStat?.isFile() ? await access.quota.holdFor(access, dst.entry) : undefined;
  let target = dst;
  try {
    const size = hold.active
      ? await bytesOf(access, src.isSymlink ? { virtual: src.virtual } : src, false)
      : 0;
    // The WebDAV properties kept on what moves go with it: checked against the quotas it enters
    // (they count from their records, which follow the move).
    const props = hold.limited ? await access.quota.propsWithin(access, src.entry) : 0;
    const replaced = overwritten?.active ? await bytesOf(access, dst, false) : 0;
    await hold.need(size + props - replaced);
    if (replacing) {
      await replacement.apply();
      target = await access.open(dst.virtual, { followFinal: false });
    }
    // A folder merged into another moves entry by entry, and its source may grow meanwhile:
    // past what was measured, every byte moved is checked against the quotas before it lands,
    // and what really moved is counted.
    let moved = 0;
    const metered: Progress = !hold.limited
      ? progress
      : {
          ...progress,
          sizes: true,
          done: async (bytes, items) => {
            moved += bytes;
            if (moved > size) await hold.need(moved + props - replaced);
            await progress.done?.(bytes, items);
          },
        };
    const merging = !!target.linkStat?.isDirectory() && !!src.linkStat?.isDirectory();
    // What a rename over a file replaces is counted as it replaces it (parallel moves onto one
    // file each replace another); across file systems, what was measured.
    const counting = overwritten?.active ? overwritten : undefined;
    const landed = await movePath(access, src, target, dirMode, metered, counting);
    if (!landed.counted) await overwritten?.commit(-replaced);
    // A metered merge or copy knows what it moved, replaced files given back (a copy also takes
    // what was put into its source before it read it); a rename moved what stood at the source
    // as it renamed it, measured where it landed.
    if (hold.limited && (merging || landed.copied)) await hold.commit(moved);
    else if (!hold.active || merging || landed.copied) await hold.commit(size);
    else {
      // What the hold must cover past the files: their properties, less what was replaced.
      const beside = props - replaced;
      await hold.commit(await renamedBytes(access, hold, src, target, size, beside, !overwritten));
    }
  } finally {
    hold.release();
    overwritten?.release();
    if (target !== dst) await target.close();
  }
}

/**
 * What a rename into a counted scope really brought: the entry measured where it landed, for
 * what was put into the source while it was measured came along with it. Past what was checked,
 * the rest is checked against the quotas; refused, the entry goes back where it came from (507,
 * as it was) while it can: when its move replaced nothing for good (`undoable`) and its old name
 * is still free. Otherwise it stays, counted as it is.
 */
async function renamedBytes(
  access: FileAccess,
  hold: QuotaHold,
  src: Opened,
  target: Opened,
  size: number,
  beside: number,
  undoable: boolean,
): Promise<number> {
  const landed = await access.open(target.virtual, { rules: false, followFinal: false });
  let measured: Measured;
  try {
    measured = await measureOpened(access, landed, false);
  } finally {
    await landed.close();
  }
  const { bytes } = measured;
  if ((bytes <= size && measured.settled) || !hold.limited) return bytes;
  try {
    // A measure that never saw the tree still (renames under it, a folder it cannot read) may
    // have missed anything: refused as a quota passed would be.
    if (!measured.settled) throw unsettledMeasure();
    await hold.need(bytes + beside);
  } catch (err) {
    // Back only from a folder that existed (none was made on the way) into a free name.
    if (!undoable || target.missing.length > 1 || !target.folder || !src.folder) return bytes;
    const back = await renameInto(target.folder, target.leaf, src.folder, src.leaf, false).then(
      () => true,
      () => false,
    );
    if (back) throw err;
  }
  return measured.settled ? bytes : Math.max(bytes, size);
}

export interface PatchRequest {
  action: string;
  override: boolean;
  rename: boolean;
  /** What `override` does to an entry in the way (see `ReplaceMode`); `merge` when not said. */
  mode?: ReplaceMode;
}

/** Whether an existing destination holds the source (is it, or a folder above it). */
function holdsSource(src: Opened, srcReal: string, dst: Opened): boolean {
  return isInside(dst.virtual, src.virtual) || isInside(dst.real, srcReal);
}

/**
 * PATCH /api/resources (contract 5.6) and WebDAV's COPY and MOVE after the route opened both
 * paths: order of checks, source-is-parent, a destination holding the source, conflicts,
 * auto-naming, permissions, descendant rules and what gives way at the destination (`replace`,
 * the one replace step of files/trash.ts). Every check passes before anything changes. Answers
 * where the item ended up (the caller closes `src` and `target`; a different answer is closed
 * here).
 */
export async function copyOrMove(
  access: FileAccess,
  src: Opened,
  target: Opened,
  req: PatchRequest,
  replace: ReplaceStep,
  dirMode: number,
  progress: Progress = {},
): Promise<{ virtual: string; entry: string; real: string }> {
  const isRename = req.action === 'rename';
  if (src.virtual === '/' || target.virtual === '/') throw forbidden();
  if (!src.linkStat) throw notFound();
  const srcReal = isRename ? src.entry : src.real;
  if (
    (target.virtual !== src.virtual && target.virtual.startsWith(src.virtual + '/')) ||
    (target.real !== srcReal && isInside(srcReal, target.real) && src.stat?.isDirectory())
  ) {
    throw badRequest('source is parent');
  }
  const sameFile =
    isRename &&
    !!target.linkStat &&
    src.linkStat.ino === target.linkStat.ino &&
    src.linkStat.dev === target.linkStat.dev &&
    src.folder?.real === target.folder?.real;
  let dst = target;
  try {
    let replacement: Replacement | undefined;
    if (!sameFile) {
      if (!req.override && !req.rename && dst.linkStat) throw conflict();
      if (req.rename && dst.linkStat) dst = await freeDestination(access, dst);
      // Replacing (or merging into) a folder that holds the source would take the source along.
      if (dst.linkStat && holdsSource(src, srcReal, dst)) {
        throw forbidden('the destination holds the source: it cannot be replaced by it');
      }
    }
    // Locks of others on what the operation takes away or writes over, and below it.
    if (isRename) await access.locks.assertWritable(access, src, { deep: true, member: true });
    await access.locks.assertWritable(access, dst, { deep: true, member: true });
    await checkDescendants(access, src, !isRename, dst.virtual);
    if (!sameFile && dst.linkStat) {
      const incomingIsDir = !!(isRename ? src.linkStat : src.stat)?.isDirectory();
      replacement = await replace.plan(access, dst, incomingIsDir, req.mode ?? 'merge');
    }
    switch (req.action) {
      case 'copy':
        if (dst.real === src.real) throw new AppError('internal', 'cannot copy a file onto itself');
        await copyCounted(access, src, dst, dirMode, progress, replacement);
        break;
      case 'rename':
        await moveCounted(access, src, dst, dirMode, progress, replacement);
        break;
      default:
        throw badRequest(`unsupported action ${req.action}: invalid request params`);
    }
    return { virtual: dst.virtual, entry: dst.entry, real: dst.real };
  } finally {
    if (dst !== target) await dst.close();
  }
}

/** Streams a file through a hash (contract 5.1 step 4). */
export async function checksum(r: Opened, algorithm: ChecksumAlgorithm): Promise<string> {
  if (!r.node) throw notFound();
  const fh = await openPinnedFile(r.node);
  try {
    const hash = crypto.createHash(algorithm);
    await pipeline(fh.createReadStream({ autoClose: false }), hash);
    return hash.digest('hex');
  } finally {
    await fh.close();
  }
}

/** statfs of a folder; a file answers zeros (contract 5.8). */
export async function usage(r: Opened): Promise<Usage> {
  if (!r.stat || !r.node) throw notFound();
  if (!r.stat.isDirectory()) return { total: 0, used: 0 };
  const s = await statFileSystem(r.node);
  return { total: s.blocks * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
}
