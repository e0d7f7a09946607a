import { Type, type Static } from '@sinclair/typebox';

/** Permission flags, in File Browser's wire order. */
export const Permissions = Type.Object({
  admin: Type.Boolean(),
  execute: Type.Boolean(),
  create: Type.Boolean(),
  rename: Type.Boolean(),
  modify: Type.Boolean(),
  delete: Type.Boolean(),
  share: Type.Boolean(),
  download: Type.Boolean(),
});
export type Permissions = Static<typeof Permissions>;
export const PERMISSION_NAMES = [
  'admin',
  'execute',
  'create',
  'rename',
  'modify',
  'delete',
  'share',
  'download',
] as const satisfies readonly (keyof Permissions)[];

export const Rule = Type.Object({
  regex: Type.Boolean(),
  allow: Type.Boolean(),
  path: Type.String(),
  regexp: Type.Union([Type.Object({ raw: Type.String() }), Type.Null()]),
});
export type Rule = Static<typeof Rule>;

export const SORT_FIELDS = ['name', 'size', 'modified'] as const;
export const Sorting = Type.Object({
  by: Type.String(),
  asc: Type.Boolean(),
});
export type Sorting = Static<typeof Sorting>;

export const VIEW_MODES = ['list', 'mosaic', 'mosaic gallery'] as const;
export type ViewMode = (typeof VIEW_MODES)[number];

/** A user as the API returns it (`password` is always blanked). */
export const User = Type.Object({
  id: Type.Integer({ minimum: 0 }),
  username: Type.String(),
  password: Type.String(),
  scope: Type.String(),
  locale: Type.String(),
  lockPassword: Type.Boolean(),
  viewMode: Type.String(),
  singleClick: Type.Boolean(),
  redirectAfterCopyMove: Type.Boolean(),
  perm: Permissions,
  commands: Type.Array(Type.String()),
  sorting: Sorting,
  rules: Type.Array(Rule),
  hideDotfiles: Type.Boolean(),
  dateFormat: Type.Boolean(),
  aceEditorTheme: Type.String(),
  uploadsLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  /** May use WebDAV when the global `webdav` setting is `per-user` (an addition of ours; admins set it). */
  webdav: Type.Optional(Type.Boolean()),
  /**
   * Bytes the user's scope may hold, trash included; 0 means no quota (an addition of ours, set
   * by admins; optional so that older clients, which never send it, keep working).
   */
  quota: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type User = Static<typeof User>;

/** The fields a request may send for a user: everything optional, types still checked. */
export const UserInput = Type.Partial(User);
export type UserInput = Static<typeof UserInput>;

/** Body of POST /api/users and PUT /api/users/{id}. */
export const UserRequest = Type.Object({
  what: Type.String(),
  which: Type.Optional(Type.Array(Type.String())),
  current_password: Type.Optional(Type.String()),
  data: UserInput,
});
export type UserRequest = Static<typeof UserRequest>;

/** Body of DELETE /api/users/{id}. */
export const UserDeleteRequest = Type.Object({
  current_password: Type.Optional(Type.String()),
});
export type UserDeleteRequest = Static<typeof UserDeleteRequest>;

/** The `user` claim of the session JWT: what the web client reads to decide what to show. */
export const TokenUser = Type.Object({
  id: Type.Integer(),
  locale: Type.String(),
  viewMode: Type.String(),
  singleClick: Type.Boolean(),
  redirectAfterCopyMove: Type.Boolean(),
  perm: Permissions,
  commands: Type.Array(Type.String()),
  lockPassword: Type.Boolean(),
  hideDotfiles: Type.Boolean(),
  dateFormat: Type.Boolean(),
  username: Type.String(),
  aceEditorTheme: Type.String(),
  uploadsLimit: Type.Optional(Type.Integer()),
  sorting: Type.Optional(Sorting),
});
export type TokenUser = Static<typeof TokenUser>;

export const TokenClaims = Type.Object({
  user: TokenUser,
  iss: Type.String(),
  exp: Type.Integer(),
  iat: Type.Integer(),
  sid: Type.Optional(Type.String()),
});
export type TokenClaims = Static<typeof TokenClaims>;

/** What POST /api/login and /api/renew answer, as text/plain: the token for the X-Auth header. */
export const SessionToken = Type.String({
  description: 'a signed session token (JWT) for the X-Auth header',
});

export const LoginRequest = Type.Object({
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  recaptcha: Type.Optional(Type.String()),
});
export type LoginRequest = Static<typeof LoginRequest>;

export const SignupRequest = Type.Object({
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  recaptcha: Type.Optional(Type.String()),
});
export type SignupRequest = Static<typeof SignupRequest>;
