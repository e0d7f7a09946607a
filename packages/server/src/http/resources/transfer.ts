import type { ServerContext } from '../../services.js';
import { badRequest } from '../../errors.js';
import type { FileAccess } from '../../files/access/access.js';
import type { FileEvents } from '../../files/change/events.js';
import { copyOrMove } from '../../files/change/ops.js';
import { type Progress } from '../../files/change/write.js';
import { sharesFollowMove } from '../../shares/service.js';
import type { StoredUser } from '../../store/users.js';
import { davFollowMove } from '../dav/follow.js';
import { withHooks, type HookWarnings } from '../file-hooks.js';
import { notify } from '../notify.js';
import { requestReplaceStep } from '../replaced.js';

export interface TransferRequest {
  action: string;
  /** Paths in the user's scope. */
  source: string;
  destination: string;
  override: boolean;
  rename: boolean;
}

/**
 * One copy or move as `PATCH /api/resources` does it (contract 5.6), for the route and for jobs
 * alike: both paths opened through the user's file access, the `before_`/`after_` hooks around
 * it, and the shares, WebDAV locks and caches told afterwards. The caller has checked the
 * permissions of `patchOperations`.
 */
export async function transfer(
  ctx: ServerContext,
  user: StoredUser,
  access: FileAccess,
  req: TransferRequest,
  events: FileEvents,
  warnings: HookWarnings,
  progress: Progress = {},
): Promise<string> {
  const { action } = req;
  const follow = action !== 'rename';
  const src = await access.open(req.source, { followFinal: follow });
  try {
    const dst = await access.open(req.destination, { followFinal: follow });
    try {
      if (action !== 'copy' && action !== 'rename') {
        throw badRequest(`unsupported action ${action}: invalid request params`);
      }
      const { dirMode } = ctx.store.settings.get();
      const file = action === 'copy' ? src.real : src.entry;
      const moved = await withHooks(
        ctx,
        user,
        warnings,
        action,
        { file, destination: dst.entry },
        () =>
          copyOrMove(
            access,
            src,
            dst,
            { action, override: req.override, rename: req.rename, mode: 'merge' },
            // Merging never deletes an entry; a step all the same, so that no copy or move
            // replaces anything another way.
            requestReplaceStep(ctx, user, access, events, undefined, `replaced by a ${action}`),
            dirMode,
            progress,
          ),
        (result) => ({ file, destination: result.entry }),
      );
      if (action === 'rename') {
        // Merged into a folder that was there: what stands at the destination is not the item.
        const merged =
          !!dst.linkStat?.isDirectory() && !!src.linkStat?.isDirectory() && moved.entry === dst.entry;
        await notify(ctx, 'rename', () => sharesFollowMove(ctx, access, src.entry, moved.entry, merged));
        await notify(ctx, 'rename', async () => await davFollowMove(ctx, access, src.entry, moved.entry));
        await notify(ctx, 'rename', () => events.moved?.(src.entry, moved.entry));
      } else {
        await notify(ctx, 'copy', () => events.changed?.(moved.real));
      }
      return moved.virtual;
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
}
