import type { AppContext } from '../../context.js';
import type { FileAccess } from '../../files/access/access.js';

/**
 * WebDAV's records of a place (dead properties, locks) after a move, through WebDAV or the web
 * API alike: the properties go along, the locks end (RFC 4918 7.7: a lock never moves).
 */
export async function davFollowMove(
  ctx: AppContext,
  access: FileAccess,
  fromReal: string,
  toReal: string,
): Promise<void> {
  const from = access.rootPathOf(fromReal);
  if (from === undefined) return;
  const to = access.rootPathOf(toReal);
  if (to === undefined) await ctx.store.davProps.remove(access.root.id, from);
  else await ctx.store.davProps.move(access.root.id, from, to);
  await ctx.store.davLocks.removeWithin(access.root.id, from);
}

/** WebDAV's records of a place and everything below it after a delete. */
export async function davFollowDelete(
  ctx: AppContext,
  access: FileAccess,
  deletedReal: string,
): Promise<void> {
  const gone = access.rootPathOf(deletedReal);
  if (gone === undefined) return;
  await ctx.store.davProps.remove(access.root.id, gone);
  await ctx.store.davLocks.removeWithin(access.root.id, gone);
}
