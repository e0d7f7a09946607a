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

export const ShareRequest = Type.Object({
  password: Type.Optional(Type.String()),
  expires: Type.Optional(Type.String()),
  unit: Type.Optional(Type.String()),
});
export type ShareRequest = Static<typeof ShareRequest>;
