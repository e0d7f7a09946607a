import { Type, type Static } from '@sinclair/typebox';

/**
 * Personal API tokens: a secret a user makes for a script or a client, sent as
 * `Authorization: Bearer <secret>` (and as the password of WebDAV's Basic auth).
 * A secret reads `fbt_<id>_<random>`: the id names the stored row, the rest is checked against
 * its hash.
 */
export const API_TOKEN_PREFIX = 'fbt_';

/** Longest token name, in characters. */
export const API_TOKEN_NAME_MAX = 100;
/** Longest expiry a token may be given, in days (0 means it never expires). */
export const API_TOKEN_MAX_DAYS = 3650;

/** A token as listings show it: never its secret or hash. Times are Unix seconds, 0 meaning none. */
export const ApiToken = Type.Object({
  id: Type.String(),
  userID: Type.Integer(),
  name: Type.String(),
  created: Type.Integer(),
  /** When a request last used it (recorded at most once a minute); 0: never. */
  lastUsed: Type.Integer(),
  /** When it stops working; 0: never. */
  expires: Type.Integer(),
  readOnly: Type.Boolean(),
  /**
   * The one folder it is limited to, as a path in its user's scope; '' for the whole scope.
   * `folderMissing` is true when that folder is no longer in the user's reach (the token then
   * refuses every request).
   */
  folder: Type.String(),
  folderMissing: Type.Boolean(),
});
export type ApiToken = Static<typeof ApiToken>;

/** What creating a token answers: the token and, this once, its secret. */
export const NewApiToken = Type.Object({ ...ApiToken.properties, secret: Type.String() });
export type NewApiToken = Static<typeof NewApiToken>;

/** DELETE /api/tokens/{id} */
export const ApiTokenParams = Type.Object({ id: Type.String() });

/** POST /api/tokens */
export const ApiTokenRequest = Type.Object({
  name: Type.String({ minLength: 1, maxLength: API_TOKEN_NAME_MAX }),
  /** Whole days until it expires; 0: never. */
  expiresInDays: Type.Integer({ minimum: 0, maximum: API_TOKEN_MAX_DAYS }),
  readOnly: Type.Boolean(),
  /** A folder of the user's scope to limit it to; absent or '' for the whole scope. */
  folder: Type.Optional(Type.String({ maxLength: 4096 })),
  /** The caller's password, required under password login (as for other sensitive changes). */
  current_password: Type.Optional(Type.String()),
});
export type ApiTokenRequest = Static<typeof ApiTokenRequest>;
