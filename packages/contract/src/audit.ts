import { Type, type Static } from '@sinclair/typebox';

/**
 * The audit log: one record per state change, kept for `audit.retentionDays`.
 * Times are Unix milliseconds.
 */
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.logout',
  'auth.signup',
  'token.create',
  'token.revoke',
  'token.use',
  'user.create',
  'user.update',
  'user.delete',
  'settings.update',
  'file.create',
  'file.upload',
  'file.modify',
  'file.rename',
  'file.move',
  'file.copy',
  'file.delete',
  'file.props',
  'upload.cancel',
  'lock.break',
  'trash.restore',
  'trash.purge',
  'share.create',
  'share.delete',
  'share.access',
  'share.download',
  'command.run',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const AuditActionSchema = Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a)));

export const AuditEntry = Type.Object({
  /** Increasing with the order records were made: the paging cursor. */
  id: Type.Integer(),
  time: Type.Integer(),
  /** Who acted (the name typed at a failed sign-in); empty for anonymous share visitors. */
  user: Type.String(),
  /** Their account id, 0 when there is none. */
  userID: Type.Integer(),
  /** The client's address (as the trusted proxies give it). */
  address: Type.String(),
  action: AuditActionSchema,
  /** The path acted on, as the user sees it (in their scope); empty when none. */
  path: Type.String(),
  /** Where a copy, rename or move went; empty otherwise. */
  destination: Type.String(),
  /** `ok` (status below 400) or `error`. */
  result: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
  /** The HTTP status of the answer (WebSocket commands: 200 for success, 500 otherwise). */
  status: Type.Integer(),
  /** What else identifies the act: a token or share id, a user name, a command line, `via dav`. */
  detail: Type.String(),
});
export type AuditEntry = Static<typeof AuditEntry>;

/** Query strings of GET /api/audit and its export: every filter is optional. */
export const AuditQuery = Type.Object({
  /** A username, exactly. */
  user: Type.Optional(Type.String({ maxLength: 256 })),
  action: Type.Optional(AuditActionSchema),
  /** A path and what is below it (`/a` matches `/a` and `/a/b`, not `/ab`), source or destination. */
  path: Type.Optional(Type.String({ maxLength: 4096 })),
  /** From this time (Unix ms, included). */
  from: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$' })),
  /** Up to this time (Unix ms, excluded). */
  to: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$' })),
  /** Records per page, 1 to 1000 (100 by default). */
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  /** The `next` of the page before: records older than it. */
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
});
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditExportQuery = Type.Object({
  ...AuditQuery.properties,
  format: Type.Union([Type.Literal('csv'), Type.Literal('json')]),
});
export type AuditExportQuery = Static<typeof AuditExportQuery>;

/** One page, newest first; `next` is the cursor of the following page, empty at the end. */
export const AuditPage = Type.Object({
  items: Type.Array(AuditEntry),
  next: Type.String(),
});
export type AuditPage = Static<typeof AuditPage>;

export const AUDIT_MAX_PAGE = 1000;
export const AUDIT_DEFAULT_PAGE = 100;
/** Longest retention an administrator may set, in days (0 keeps records forever). */
export const AUDIT_MAX_RETENTION_DAYS = 36500;
export const AUDIT_DEFAULT_RETENTION_DAYS = 90;

export const AuditSettings = Type.Object({
  retentionDays: Type.Integer({ minimum: 0, maximum: AUDIT_MAX_RETENTION_DAYS }),
});
export type AuditSettings = Static<typeof AuditSettings>;
