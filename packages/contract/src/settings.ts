import { Type, type Static } from '@sinclair/typebox';
import { AuditSettings } from './audit.js';
import { TRASH_MAX_RETENTION_DAYS } from './trash.js';
import { Permissions, Rule, Sorting } from './users.js';

export const THEMES = ['', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

export const AUTH_METHODS = ['json', 'proxy', 'hook', 'noauth'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export const HOOK_EVENTS = ['save', 'copy', 'rename', 'upload', 'delete'] as const;
export const HOOK_TRIGGERS = HOOK_EVENTS.flatMap((e) => [`before_${e}`, `after_${e}`] as const);

export const UserDefaults = Type.Object({
  scope: Type.String(),
  locale: Type.String(),
  viewMode: Type.String(),
  singleClick: Type.Boolean(),
  redirectAfterCopyMove: Type.Boolean(),
  sorting: Sorting,
  perm: Permissions,
  commands: Type.Array(Type.String()),
  hideDotfiles: Type.Boolean(),
  dateFormat: Type.Boolean(),
  aceEditorTheme: Type.String(),
  uploadsLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  /** Quota in bytes of new users (0: none); see `User.quota`. */
  quota: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type UserDefaults = Static<typeof UserDefaults>;

export const Branding = Type.Object({
  name: Type.String(),
  disableExternal: Type.Boolean(),
  disableUsedPercentage: Type.Boolean(),
  files: Type.String(),
  theme: Type.String(),
  color: Type.String(),
});
export type Branding = Static<typeof Branding>;

/**
 * A branding colour the page can put in its theme-color meta and the app manifest without
 * escaping: a hex colour or a CSS colour name. Empty means the default blue.
 */
export const BRAND_COLOR_PATTERN = /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$|^[a-zA-Z]+$/;
export const DEFAULT_BRAND_COLOR = '#2979ff';

/** bcrypt reads at most 72 bytes, so a longer minimum would refuse every password. */
export const MAX_MINIMUM_PASSWORD_LENGTH = 72;
/** What a stored minimum of 0 stands for (File Browser's default). */
export const DEFAULT_MINIMUM_PASSWORD_LENGTH = 12;

export const TusSettings = Type.Object({
  chunkSize: Type.Integer({ minimum: 0 }),
  retryCount: Type.Integer({ minimum: 0, maximum: 65535 }),
});
export type TusSettings = Static<typeof TusSettings>;

/**
 * The trash (an addition of ours): deletes move items into their owner's trash, kept for
 * `retentionDays` (0: until emptied by hand). Off, a delete is permanent.
 */
export const TrashSettings = Type.Object({
  enabled: Type.Boolean(),
  retentionDays: Type.Integer({ minimum: 0, maximum: TRASH_MAX_RETENTION_DAYS }),
});
export type TrashSettings = Static<typeof TrashSettings>;

/**
 * Who may use WebDAV at `/dav/` (an addition of ours): nobody, every user, or the users whose
 * `webdav` flag an administrator set.
 */
export const WEBDAV_MODES = ['off', 'on', 'per-user'] as const;
export type WebDavMode = (typeof WEBDAV_MODES)[number];
export const WebDavModeSchema = Type.Union(WEBDAV_MODES.map((m) => Type.Literal(m)));

/** GET/PUT /api/settings, in File Browser's field order. */
export const Settings = Type.Object({
  signup: Type.Boolean(),
  hideLoginButton: Type.Boolean(),
  createUserDir: Type.Boolean(),
  minimumPasswordLength: Type.Integer({ minimum: 0, maximum: MAX_MINIMUM_PASSWORD_LENGTH }),
  userHomeBasePath: Type.String(),
  defaults: UserDefaults,
  authMethod: Type.String(),
  rules: Type.Array(Rule),
  branding: Branding,
  tus: TusSettings,
  shell: Type.Array(Type.String()),
  commands: Type.Record(Type.String(), Type.Array(Type.String())),
  /**
   * An addition of ours: commands of the runner's deny list (they run other commands) that the
   * administrator allows anyway. Bare command names; empty by default.
   */
  unsafeCommands: Type.Array(Type.String()),
  trash: TrashSettings,
  /** How long the audit log keeps its records; optional so older clients' bodies validate. */
  audit: Type.Optional(AuditSettings),
  /** WebDAV at `/dav/`: `on` by default. Optional so older clients' bodies still validate. */
  webdav: Type.Optional(WebDavModeSchema),
  /**
   * Whether WebDAV's Basic auth takes the account password as well as personal API tokens:
   * `true` by default, so clients set up before tokens existed keep working.
   * Optional for the same reason as `webdav`.
   */
  webdavPasswords: Type.Optional(Type.Boolean()),
});
export type Settings = Static<typeof Settings>;

/** What PUT /api/settings accepts: missing keys take zero values, as in the old server. */
export const SettingsInput = Type.Partial(
  Type.Object({
    ...Settings.properties,
    defaults: Type.Partial(UserDefaults),
    branding: Type.Partial(Branding),
    tus: Type.Partial(TusSettings),
    trash: Type.Partial(TrashSettings),
    audit: Type.Partial(AuditSettings),
    rules: Type.Union([Type.Array(Rule), Type.Null()]),
    shell: Type.Union([Type.Array(Type.String()), Type.Null()]),
    unsafeCommands: Type.Union([Type.Array(Type.String()), Type.Null()]),
    commands: Type.Union([
      Type.Record(Type.String(), Type.Union([Type.Array(Type.String()), Type.Null()])),
      Type.Null(),
    ]),
  }),
);
export type SettingsInput = Static<typeof SettingsInput>;

/** `window.FileBrowser`: the start-up settings the page needs before it runs (keys alphabetical). */
export const StartupSettings = Type.Object({
  AuthMethod: Type.String(),
  BaseURL: Type.String(),
  CSS: Type.Boolean(),
  Color: Type.String(),
  DisableExternal: Type.Boolean(),
  DisableUsedPercentage: Type.Boolean(),
  EnableExec: Type.Boolean(),
  EnableThumbs: Type.Boolean(),
  HideLoginButton: Type.Boolean(),
  LoginPage: Type.Boolean(),
  LogoutPage: Type.String(),
  Name: Type.String(),
  NoAuth: Type.Boolean(),
  ReCaptcha: Type.Boolean(),
  ReCaptchaHost: Type.Optional(Type.String()),
  ReCaptchaKey: Type.Optional(Type.String()),
  ResizePreview: Type.Boolean(),
  Signup: Type.Boolean(),
  StaticURL: Type.String(),
  Theme: Type.String(),
  TusSettings,
  Version: Type.String(),
  /** Archive formats this server can write (algo values of GET /api/raw); an addition of ours. */
  ArchiveFormats: Type.Optional(Type.Array(Type.String())),
});
export type StartupSettings = Static<typeof StartupSettings>;
