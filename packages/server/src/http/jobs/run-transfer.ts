import path from 'node:path';
import type { JobStart } from '@filebrowser/contract';
import type { ServerContext } from '../../services.js';
import { fileAccessFor, type FileAccess } from '../../files/access/access.js';
import type { FileEvents } from '../../files/change/events.js';
import { joinVirtual } from '../../files/access/resolver.js';
import { measure, type Measure } from '../../files/access/tree.js';
import type { JobRecord } from '../../jobs/registry.js';
import type { AuditDraft } from '../../audit/http.js';
import { AppError, fromSystemError } from '../../errors.js';
import { transfer } from '../resources/transfer.js';

/**
 * What a copy or move will carry, walked as the copy walks (links followed for a copy, not for a
 * move; rules applied). A path that cannot be opened counts nothing: the transfer itself then
 * fails with the answer the PATCH route would give.
 */
async function measureItems(access: FileAccess, req: JobStart, signal: AbortSignal): Promise<Measure> {
  const follow = req.action === 'copy';
  const total: Measure = { bytes: 0, items: 0, partial: false };
  for (const item of req.items) {
    const r = await access.open(item, { followFinal: follow }).catch(() => undefined);
    if (!r) continue;
    try {
      await measure(access, r, { follow, signal, include: (e) => access.checkResolved(e) }, total);
    } finally {
      await r.close();
    }
  }
  return total;
}

/**
 * Runs a copy or move job: the totals first, then each item into the destination folder under
 * its own name, through the PATCH route's `transfer`. Each item lands whole or not at all; a
 * cancel stops the item in progress (its partial copy removed, a move's source left whole) and
 * the items after it.
 *
 * The job acts as its caller is now, asked again before each item and after each file and
 * mebibyte (`JobRecord.advance`): the user and file access of an item are derived afresh, and a
 * refusal (session ended, token revoked, user deleted, permission withdrawn, scope or rules
 * changed) stops it as a cancel would, the job failing with that refusal.
 */
export async function runTransferJob(
  ctx: ServerContext,
  req: JobStart,
  record: JobRecord,
  events: FileEvents,
  recordItem: (status: number, draft: AuditDraft) => void,
): Promise<void> {
  const { signal, caller } = record;
  try {
    record.measured(await measureItems(await fileAccessFor(ctx, await caller.now()), req, signal));
    for (const item of req.items) {
      signal.throwIfAborted();
      const destination = joinVirtual(req.destination, path.posix.basename(item));
      // Recorded as the PATCH route records the same work: a rename into another folder is a move.
      const action = req.action === 'copy' ? 'file.copy' : 'file.move';
      const detail = `job ${record.job.id}`;
      try {
        const user = await caller.now();
        const landed = await transfer(
          ctx,
          user,
          await fileAccessFor(ctx, user),
          {
            action: req.action,
            source: item,
            destination,
            override: req.override ?? false,
            rename: req.rename ?? false,
          },
          events,
          (warning) => ctx.log.warn({ job: record.job.id, warning }, 'job: after-hooks failed'),
          { signal, done: record.advance, stillAllowed: () => caller.now() },
        );
        recordItem(200, { action, path: item, destination: landed, detail });
      } catch (err) {
        // A cancel is the client's 499; a refused check of the caller (an AppError) is its status.
        const refusal = signal.aborted && signal.reason instanceof AppError ? signal.reason : undefined;
        const cancelled = signal.aborted && !refusal;
        const status = cancelled ? 499 : (fromSystemError(refusal ?? err)?.status ?? 500);
        recordItem(status, {
          action,
          path: item,
          destination,
          detail: cancelled ? `${detail} cancelled` : detail,
        });
        throw err;
      }
    }
    record.finish();
  } catch (err) {
    record.finish(err);
  }
}
