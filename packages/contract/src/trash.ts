import { Type, type Static } from '@sinclair/typebox';

/**
 * The trash: a delete moves the item into its owner's trash, from where it can be
 * restored to where it was or deleted forever. Times are Unix milliseconds.
 */
export const TrashItem = Type.Object({
  id: Type.String(),
  /** The user whose trash holds it (the one who deleted it). */
  userID: Type.Integer(),
  /** Its base name. */
  name: Type.String(),
  /** Where it was, as a path in its owner's scope when it was deleted. */
  path: Type.String(),
  /** The folder it was in (the parent of `path`). */
  folder: Type.String(),
  /** Bytes (a folder: the sum of its files). */
  size: Type.Integer({ minimum: 0 }),
  isDir: Type.Boolean(),
  /** Username of who deleted it. */
  deletedBy: Type.String(),
  deletedAt: Type.Integer(),
  /** When the retention setting purges it (0: never, retention off). */
  expiresAt: Type.Integer(),
});
export type TrashItem = Static<typeof TrashItem>;

/** What a restore answers: where the item is now. */
export const TrashRestoreResult = Type.Object({
  /** The path it was restored to, in the user's current scope. */
  path: Type.String(),
  /** Missing folders on the way to the original place were made again. */
  recreatedFolders: Type.Boolean(),
  /** It was copied across file systems and the trash copy removed (no rename was possible). */
  copied: Type.Boolean(),
});
export type TrashRestoreResult = Static<typeof TrashRestoreResult>;

/** DELETE /api/trash/{id} and POST /api/trash/{id}/restore */
export const TrashItemParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{1,64}$' }) });

/** GET /api/trash: an administrator may name another user's trash. */
export const TrashListQuery = Type.Object({
  user: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'the id of the user whose trash' })),
});

/** POST /api/trash/{id}/restore: what to do when something is in the way (flags: "true"). */
export const TrashRestoreQuery = Type.Object({
  rename: Type.Optional(Type.String({ description: 'restore under a free name ("true")' })),
  override: Type.Optional(Type.String({ description: 'replace what is there ("true")' })),
});

/** Header of a DELETE /api/resources answer: `trash` (moved to the trash) or `permanent`. */
export const DELETE_OUTCOME_HEADER = 'X-Delete-Outcome';
/** Header set with `trash` when the move had to copy across file systems then delete. */
export const TRASH_COPIED_HEADER = 'X-Trash-Copied';

/** Longest retention an administrator may set, in days. */
export const TRASH_MAX_RETENTION_DAYS = 36500;
