import crypto from 'node:crypto';
import {
  AUDIT_DEFAULT_RETENTION_DAYS,
  HOOK_TRIGGERS,
  type AuditSettings,
  type Settings,
  type UserDefaults,
  type WebDavMode,
} from '@filebrowser/contract';
import type { Sql } from './sql.js';

/** Auth-method details that the settings API never exposes. */
export interface AutherConfig {
  recaptcha: { host: string; key: string; secret: string } | null;
  /** Request header naming the user, for the proxy method. */
  header: string;
  /** Command of the hook method (not supported here; kept so exports round-trip). */
  command: string;
}

/** Global settings as stored: the API shape plus what the API never shows. */
export interface StoredSettings extends Settings {
  /** HS256 signing key, base64 of 64 random bytes. */
  key: string;
  logoutPage: string;
  fileMode: number;
  dirMode: number;
  auther: AutherConfig;
  webdav: WebDavMode;
  webdavPasswords: boolean;
  audit: AuditSettings;
}

export const DEFAULT_USER_DEFAULTS: UserDefaults = {
  scope: '.',
  locale: 'en',
  viewMode: 'mosaic',
  singleClick: false,
  redirectAfterCopyMove: true,
  sorting: { by: 'name', asc: false },
  perm: {
    admin: false,
    execute: true,
    create: true,
    rename: true,
    modify: true,
    delete: true,
    share: true,
    download: true,
  },
  commands: [],
  hideDotfiles: false,
  dateFormat: false,
  aceEditorTheme: '',
  uploadsLimit: 5,
  quota: 0,
};

export function emptyCommands(): Record<string, string[]> {
  return Object.fromEntries(HOOK_TRIGGERS.map((t) => [t, [] as string[]]));
}

/** Settings of a brand-new installation (File Browser's quick setup). */
export function defaultSettings(): StoredSettings {
  return {
    signup: false,
    hideLoginButton: true,
    createUserDir: false,
    minimumPasswordLength: 12,
    userHomeBasePath: '/users',
    defaults: structuredClone(DEFAULT_USER_DEFAULTS),
    authMethod: 'json',
    rules: [],
    branding: {
      name: '',
      disableExternal: false,
      disableUsedPercentage: false,
      files: '',
      theme: '',
      color: '',
    },
    tus: { chunkSize: 10 * 1024 * 1024, retryCount: 5 },
    shell: [],
    commands: emptyCommands(),
    unsafeCommands: [],
    trash: { enabled: true, retentionDays: 30 },
    audit: { retentionDays: AUDIT_DEFAULT_RETENTION_DAYS },
    key: crypto.randomBytes(64).toString('base64'),
    logoutPage: '/login',
    fileMode: 0o640,
    dirMode: 0o750,
    auther: { recaptcha: null, header: '', command: '' },
    webdav: 'on',
    webdavPasswords: true,
  };
}

/** Fills what older or imported records lack, as File Browser does on read. */
export function normaliseSettings(s: Partial<StoredSettings>): StoredSettings {
  const d = defaultSettings();
  const tus = s.tus && (s.tus.chunkSize || s.tus.retryCount) ? s.tus : d.tus;
  return {
    ...d,
    ...s,
    minimumPasswordLength: s.minimumPasswordLength || 12,
    userHomeBasePath: s.userHomeBasePath || '/users',
    defaults: { ...d.defaults, ...s.defaults, sorting: { ...d.defaults.sorting, ...s.defaults?.sorting } },
    rules: s.rules ?? [],
    branding: { ...d.branding, ...s.branding },
    tus: { ...d.tus, ...tus },
    shell: s.shell ?? [],
    commands: { ...emptyCommands(), ...s.commands },
    // Records written before the setting existed have none: nothing is exempt from the deny list.
    unsafeCommands: Array.isArray(s.unsafeCommands)
      ? s.unsafeCommands.filter((name): name is string => typeof name === 'string')
      : [],
    // Records written before the trash existed get it on, as new installations do.
    trash: { ...d.trash, ...s.trash },
    // Records written before the audit log existed keep its records for the default time.
    audit: { ...d.audit, ...s.audit },
    key: s.key || d.key,
    logoutPage: s.logoutPage || '/login',
    fileMode: s.fileMode || d.fileMode,
    dirMode: s.dirMode || d.dirMode,
    auther: { ...d.auther, ...s.auther },
    // Anything else (older records have nothing) leaves WebDAV on.
    webdav: s.webdav === 'off' || s.webdav === 'per-user' ? s.webdav : 'on',
    // Only an explicit false turns passwords off: older records keep the clients they had working.
    webdavPasswords: s.webdavPasswords !== false,
  };
}

/**
 * Key/value records of the config table: `settings` (StoredSettings) and `server` (server options
 * persisted by `config init|set|import`). Both are read once, when the store opens (`load`), and
 * kept in memory: they are read on every request and written only through this class.
 */
export class SettingsRepo {
  private settings: StoredSettings | undefined;
  private server: Record<string, unknown> = {};

  /** Told after every save (the other instances read the settings again). */
  changed: () => Promise<void> = () => Promise.resolve();

  constructor(private readonly sql: Sql) {}

  /** Reads both records; a database without settings gets the defaults (and a new signing key) written. */
  async load(): Promise<void> {
    const raw = await this.read<Partial<StoredSettings>>('settings');
    this.server = (await this.read<Record<string, unknown>>('server')) ?? {};
    this.settings = normaliseSettings(raw ?? {});
    if (!raw) await this.write('settings', this.settings);
  }

  get(): StoredSettings {
    if (!this.settings) throw new Error('the settings were read before the store loaded them');
    return this.settings;
  }

  async save(settings: StoredSettings): Promise<StoredSettings> {
    const normalised = normaliseSettings(settings);
    await this.write('settings', normalised);
    this.settings = normalised;
    await this.changed();
    return normalised;
  }

  getServer(): Record<string, unknown> {
    return this.server;
  }

  async saveServer(server: Record<string, unknown>): Promise<void> {
    await this.write('server', server);
    this.server = server;
  }

  private async read<T>(key: string): Promise<T | undefined> {
    const row = await this.sql.selectFrom('config').select('value').where('key', '=', key).executeTakeFirst();
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  private async write(key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    await this.sql
      .insertInto('config')
      .values({ key, value: text })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: text }))
      .execute();
  }
}
