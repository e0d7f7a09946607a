import { Type, type Static } from '@sinclair/typebox';

export const SHARE_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type ShareUnit = (typeof SHARE_UNITS)[number];

/** A share link as management answers show it: never its password hash or token. */
export const Share = Type.Object({
  hash: Type.String(),
  path: Type.String(),
  userID: Type.Integer(),
  expire: Type.Integer(),
  hasPassword: Type.Boolean(),
});
export type Share = Static<typeof Share>;

/** POST /api/share{path}; an empty `expires` makes a link that never expires. */
export const ShareRequest = Type.Object({
  password: Type.Optional(Type.String()),
  /** A number of `unit`s; old clients send it as a string, scripts as a number. */
  expires: Type.Optional(Type.Union([Type.String(), Type.Number()])),
  unit: Type.Optional(Type.String({ description: 'seconds, minutes, hours or days' })),
});
export type ShareRequest = Static<typeof ShareRequest>;
