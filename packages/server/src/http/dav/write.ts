import { assertMay, may } from '../../auth/policy.js';
import { callerOf } from '../guards.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../errors.js';
import { etagOf } from '../../files/listing/go-format.js';
import { copyOrMove } from '../../files/change/ops.js';
import { makeDirectory, writeFileAtomic } from '../../files/change/write.js';
import { isInside } from '../../files/access/resolver.js';
import { deleteOrTrash } from '../../files/change/trash.js';
import type { Opened } from '../../files/access/resolver.js';
import { sharesFollowDelete, sharesFollowMove } from '../../shares/service.js';
import { declaredLength } from '../content-length.js';
import { withHooks } from '../file-hooks.js';
import { requestReplaceStep } from '../replaced.js';
import { davFollowDelete, davFollowMove } from './follow.js';
import { davPlace } from './locks.js';
import { MAX_PROP_BYTES_PER_USER, propHoldsOf } from './prop-holds.js';
import { destinationVirtual } from './paths.js';
import { header, notify, type DavRequest } from './request.js';
import { hasBody } from './xml.js';

/** A missing folder on the way is a conflict in WebDAV (409), never created on the fly. */
function assertParentExists(r: Opened): void {
  if (r.missing.length > 1 || r.blocked) throw conflict('the parent folder does not exist');
}

/** PUT: streams the body to a staging file beside the target and renames it into place. */
export async function handlePut(dav: DavRequest) {
  if (header(dav, 'content-range')) throw badRequest('PUT with Content-Range is not supported');
  const r = await dav.access.open(dav.virtual);
  try {
    if (r.stat?.isDirectory()) throw new AppError('method_not_allowed', 'a folder exists at this path');
    if (r.trailingSlash) throw conflict('a file name cannot end with /');
    const exists = !!r.linkStat;
    assertMay(dav.access.perm, exists ? 'modify' : 'create');
    if (!exists) assertParentExists(r);
    const { fileMode, dirMode } = dav.ctx.store.settings.get();
    const mayReplace = may(dav.access.perm, 'modify');
    const st = await withHooks(
      dav.ctx,
      dav.user,
      dav.reply,
      exists ? 'save' : 'upload',
      { file: r.real },
      () =>
        writeFileAtomic(dav.access, r, dav.request.raw, {
          fileMode,
          dirMode,
          length: declaredLength(dav.request.raw),
          // A PUT replaces; what appeared since it looked, only for a user who may modify, who
          // is asked again for it as the file lands.
          stillAllowed: () =>
            callerOf(
              dav.ctx,
              dav.request,
              exists ? ['modify'] : mayReplace ? ['create', 'modify'] : ['create'],
            ),
          replace: exists || mayReplace,
        }),
    );
    await notify(dav, 'upload', () => dav.events.changed?.(r.real));
    void dav.reply.header('ETag', etagOf(st));
    return dav.reply.code(exists ? 204 : 201).send();
  } finally {
    await r.close();
  }
}

/** MKCOL: one new folder; its parent must exist (409), the name must be free (405), no body (415). */
export async function handleMkcol(dav: DavRequest) {
  if (hasBody(dav.request))
    throw new AppError('unsupported_media_type', 'MKCOL with a body is not supported');
  const r = await dav.access.open(dav.virtual, { followFinal: false });
  try {
    if (r.linkStat) throw new AppError('method_not_allowed', 'something exists at this path');
    assertMay(dav.access.perm, 'create');
    assertParentExists(r);
    const { dirMode } = dav.ctx.store.settings.get();
    await withHooks(dav.ctx, dav.user, dav.reply, 'upload', { file: r.real }, () =>
      makeDirectory(dav.access, r, dirMode),
    );
    return dav.reply.code(201).send();
  } finally {
    await r.close();
  }
}

/** Removes what an opened path names (a link itself), with its dead properties, locks and shares. */
async function remove(dav: DavRequest, r: Opened): Promise<void> {
  // Into the user's trash while the trash is on, as a delete through the web API.
  await withHooks(dav.ctx, dav.user, dav.reply, 'delete', { file: r.entry }, () =>
    deleteOrTrash(dav.ctx, dav.access, dav.user, r),
  );
  await davFollowDelete(dav.ctx, dav.access, r.entry);
  await notify(dav, 'delete', () => sharesFollowDelete(dav.ctx, dav.access, r.entry));
  await notify(dav, 'delete', () => dav.events.deleted?.(r.entry));
}

/** DELETE: the whole tree (Depth infinity is the only depth a DELETE has). */
export async function handleDelete(dav: DavRequest) {
  const r = await dav.access.open(dav.virtual, { followFinal: false });
  try {
    if (r.virtual === '/') throw forbidden('the root folder cannot be deleted');
    if (!r.linkStat) throw notFound();
    assertMay(dav.access.perm, 'delete');
    await remove(dav, r);
    return dav.reply.code(204).send();
  } finally {
    await r.close();
  }
}

/**
 * COPY and MOVE. The Destination must be on this server below /dav/ (502 otherwise), and must
 * neither hold the source nor lie inside it (403). An existing destination is replaced only with
 * `Overwrite: T` (412 otherwise), whole rather than merged (RFC 4918 9.8.4, 9.9.3), through the
 * one replace step (files/trash.ts): a file replaced by a file needs modify; a folder, a link, or
 * a file replaced by a folder is deleted as DELETE deletes (the delete permission, the trash),
 * and only once every check of the operation passed, before-hooks included.
 */
export async function handleCopyMove(dav: DavRequest, move: boolean) {
  const dstVirtual = destinationVirtual(dav.ctx, dav.request);
  const overwrite = (header(dav, 'overwrite') ?? 'T').trim().toUpperCase();
  if (overwrite !== 'T' && overwrite !== 'F') throw badRequest('Overwrite must be T or F');
  const depth = (header(dav, 'depth') ?? 'infinity').toLowerCase();
  if (depth !== 'infinity' && (move || depth !== '0')) {
    throw badRequest(move ? 'a MOVE has Depth infinity' : 'a COPY has Depth 0 or infinity');
  }
  const { access } = dav;
  const src = await access.open(dav.virtual, { followFinal: !move });
  try {
    if (!src.linkStat) throw notFound();
    if (src.virtual === '/') throw forbidden('the root folder cannot be copied or moved');
    // The destination is the entry itself: a link there is replaced, never written through.
    const dst = await access.open(dstVirtual, { followFinal: false });
    try {
      if (dst.virtual === src.virtual) throw forbidden('the source and the destination are the same');
      if (dst.virtual === '/') throw forbidden('the root folder cannot be replaced');
      if (isInside(src.virtual, dst.virtual)) throw forbidden('a folder cannot go inside itself');
      if (isInside(dst.virtual, src.virtual)) {
        throw forbidden('the destination holds the source: it cannot be replaced by it');
      }
      const existed = !!dst.linkStat;
      if (existed && overwrite === 'F') {
        throw new AppError('precondition_failed', 'the destination exists and Overwrite is F');
      }
      assertMay(access.perm, move ? 'rename' : 'copy');
      assertParentExists(dst);
      const srcPlace = davPlace(dav, src);
      const dstPlace = davPlace(dav, dst);

      const rootId = access.root.id;
      const { dirMode } = dav.ctx.store.settings.get();
      const shallow = !move && depth === '0' && !!src.stat?.isDirectory();
      const action = move ? 'rename' : 'copy';
      const file = move ? src.entry : src.real;
      // A copy's dead properties become the copier's: within their limit and the quota, checked now.
      const propRows = move ? [] : await dav.ctx.store.davProps.rowsWithin(rootId, srcPlace, shallow);
      const propBytes = propRows.reduce((n, r) => n + Buffer.byteLength(r.xml), 0);
      const propRelease = await propHoldsOf(dav.ctx).hold(
        dav.user.id,
        () => dav.ctx.store.davProps.bytesOfUser(dav.user.id),
        propBytes,
      );
      if (!propRelease) {
        throw new AppError(
          'insufficient_storage',
          `the copy's WebDAV properties would pass the ${MAX_PROP_BYTES_PER_USER / 1024} KiB your properties may hold`,
        );
      }
      const propHold =
        propBytes > 0
          ? await access.quota.reserve(access, dst.entry, propBytes).catch(async (err: unknown) => {
              await propRelease();
              throw err;
            })
          : undefined;
      const replace = requestReplaceStep(
        dav.ctx,
        dav.user,
        access,
        dav.events,
        dav.request,
        `replaced by a WebDAV ${move ? 'MOVE' : 'COPY'}`,
      );
      let done: { entry: string; real: string };
      try {
        done = await withHooks(
          dav.ctx,
          dav.user,
          dav.reply,
          action,
          { file, destination: dst.entry },
          async () => {
            if (!shallow) {
              return copyOrMove(
                access,
                src,
                dst,
                { action, override: true, rename: false, mode: 'replace' },
                replace,
                dirMode,
                // Asked again before each entry lands: a copy can outlast its token or password;
                // one that replaces what stood there needs modify still.
                {
                  stillAllowed: () => callerOf(dav.ctx, dav.request, existed ? [action, 'modify'] : [action]),
                },
              );
            }
            // Depth 0: the folder without its members, in place of what was there.
            if (existed) await (await replace.plan(access, dst, true, 'replace')).apply();
            const made = await access.open(dstVirtual, { followFinal: false });
            try {
              await makeDirectory(access, made, dirMode);
            } finally {
              await made.close();
            }
            return { entry: dst.entry, real: dst.real };
          },
          (result) => ({ file, destination: result.entry }),
        );
        if (!move) await dav.ctx.store.davProps.copy(rootId, srcPlace, dstPlace, propRows, dav.user.id);
      } finally {
        propHold?.release();
        await propRelease();
      }
      if (move) {
        await davFollowMove(dav.ctx, access, src.entry, done.entry);
        await notify(dav, 'rename', () => sharesFollowMove(dav.ctx, access, src.entry, done.entry));
        await notify(dav, 'rename', () => dav.events.moved?.(src.entry, done.entry));
      } else {
        await notify(dav, 'copy', () => dav.events.changed?.(done.real));
      }
      return dav.reply.code(existed ? 204 : 201).send();
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
}
