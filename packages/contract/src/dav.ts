import { Type, type Static } from '@sinclair/typebox';

/**
 * WebDAV locks as administrators see them (`GET /api/dav/locks`): who holds what, until when.
 * Times are Unix milliseconds.
 */
export const DavLockInfo = Type.Object({
  /** The lock token (`opaquelocktoken:…`): what `DELETE /api/dav/locks/{token}` breaks. */
  token: Type.String(),
  /** Where the locked resource lies below the served root (`/team/plan.txt`). */
  path: Type.String(),
  /** Its holder. */
  userID: Type.Integer(),
  username: Type.String(),
  scope: Type.Union([Type.Literal('exclusive'), Type.Literal('shared')]),
  /** `infinity`: a folder's lock covers everything below it (that its holder may write). */
  depth: Type.Union([Type.Literal('0'), Type.Literal('infinity')]),
  /** What the client said about its owner (a name or a URL), as text; empty when nothing. */
  owner: Type.String(),
  createdAt: Type.Integer(),
  /** When it ends unless refreshed (never later than a week after `createdAt`). */
  expiresAt: Type.Integer(),
});
export type DavLockInfo = Static<typeof DavLockInfo>;

/** DELETE /api/dav/locks/{token} */
export const DavLockParams = Type.Object({
  token: Type.String({ pattern: '^opaquelocktoken:[0-9a-f-]{36}$' }),
});
