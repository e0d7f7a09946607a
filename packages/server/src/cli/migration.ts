import {
  PERMISSION_NAMES,
  type Permissions,
  type Rule,
  type UserDefaults,
  type WebDavMode,
} from '@filebrowser/contract';
import { normaliseScope } from '../auth/homes.js';
import { looksLikeBcryptHash } from '../auth/passwords.js';
import {
  optionsFromServerRecord,
  serverRecordFromOptions,
  SERVER_RECORD_KEYS,
} from '../config/server-record.js';
import { validateRules } from '../rules/validate.js';
import { cleanUnsafeCommands } from '../runner/options.js';
import { emptyCommands, type StoredSettings } from '../store/settings.js';
import { normaliseSorting, type NewUser, type StoredUser } from '../store/users.js';
import { bool, docField, field, isDoc, num, str, strings, type Doc } from './export-files.js';
import { CliError } from './io.js';
import { DEFAULT_RECAPTCHA_HOST, SUPPORTED_AUTH_METHODS } from './settings-flags.js';

/**
 * Conversions between our records and File Browser 2.x's `config export` / `users export`
 * documents (contract 15.3). Field order follows File Browser's so diffs against old exports stay small.
 */

// ---------------------------------------------------------------------------------------------
// Shared parts

function permissionsFrom(doc: unknown, fallback: Permissions): Permissions {
  const perm = { ...fallback };
  for (const p of PERMISSION_NAMES) perm[p] = bool(doc, p, fallback[p]);
  return perm;
}

function rulesFrom(value: unknown): Rule[] {
  if (!Array.isArray(value)) return [];
  return value.map((r) => {
    const regexp = field(r, 'regexp');
    return {
      regex: bool(r, 'regex'),
      allow: bool(r, 'allow'),
      path: str(r, 'path'),
      regexp: isDoc(regexp) ? { raw: str(regexp, 'raw') } : null,
    };
  });
}

function rulesTo(rules: Rule[]): Rule[] {
  return rules.map((r) => ({ regex: r.regex, allow: r.allow, path: r.path, regexp: r.regexp }));
}

function uploadsLimitFrom(doc: unknown, fallback: number): number {
  const n = num(doc, 'uploadsLimit', fallback);
  return Number.isInteger(n) && n >= 1 && n <= 10 ? n : fallback;
}

// ---------------------------------------------------------------------------------------------
// Settings

function defaultsTo(d: UserDefaults): Doc {
  return {
    scope: d.scope,
    locale: d.locale,
    viewMode: d.viewMode,
    singleClick: d.singleClick,
    redirectAfterCopyMove: d.redirectAfterCopyMove,
    sorting: { by: d.sorting.by, asc: d.sorting.asc },
    perm: { ...d.perm },
    commands: [...d.commands],
    hideDotfiles: d.hideDotfiles,
    dateFormat: d.dateFormat,
    aceEditorTheme: d.aceEditorTheme,
    uploadsLimit: d.uploadsLimit ?? 5,
  };
}

function defaultsFrom(doc: unknown, base: UserDefaults): UserDefaults {
  return {
    scope: str(doc, 'scope', base.scope),
    locale: str(doc, 'locale') || base.locale,
    viewMode: str(doc, 'viewMode') || base.viewMode,
    singleClick: bool(doc, 'singleClick'),
    redirectAfterCopyMove: bool(doc, 'redirectAfterCopyMove', base.redirectAfterCopyMove),
    sorting: normaliseSorting({
      by: str(docField(doc, 'sorting'), 'by'),
      asc: bool(docField(doc, 'sorting'), 'asc'),
    }),
    perm: permissionsFrom(docField(doc, 'perm'), base.perm),
    commands: strings(doc, 'commands'),
    hideDotfiles: bool(doc, 'hideDotfiles'),
    dateFormat: bool(doc, 'dateFormat'),
    aceEditorTheme: str(doc, 'aceEditorTheme'),
    uploadsLimit: uploadsLimitFrom(doc, base.uploadsLimit ?? 5),
  };
}

/** The `settings` object of `config export`. */
export function settingsToExport(s: StoredSettings): Doc {
  return {
    key: s.key,
    signup: s.signup,
    hideLoginButton: s.hideLoginButton,
    createUserDir: s.createUserDir,
    userHomeBasePath: s.userHomeBasePath,
    defaults: defaultsTo(s.defaults),
    authMethod: s.authMethod,
    logoutPage: s.logoutPage,
    branding: { ...s.branding },
    tus: { ...s.tus },
    commands: structuredClone(s.commands),
    shell: [...s.shell],
    // Ours only: File Browser has no such setting and ignores the key.
    unsafeCommands: [...s.unsafeCommands],
    // Ours only, as unsafeCommands.
    webdav: s.webdav,
    trash: { ...s.trash },
    webdavPasswords: s.webdavPasswords,
    rules: rulesTo(s.rules),
    minimumPasswordLength: s.minimumPasswordLength,
    fileMode: s.fileMode,
    dirMode: s.dirMode,
  };
}

/** The `auther` object: what File Browser stored for the auth method in use. */
export function autherToExport(s: StoredSettings): Doc {
  switch (s.authMethod) {
    case 'json':
      return { recaptcha: s.auther.recaptcha ? { ...s.auther.recaptcha } : null };
    case 'proxy':
      return { header: s.auther.header };
    case 'hook':
      return { command: s.auther.command };
    default:
      return {};
  }
}

export interface ImportedConfig {
  settings: StoredSettings;
  server: Record<string, unknown>;
  warnings: string[];
}

/**
 * Reads a `config export` document over `base` (the settings kept when the file says nothing,
 * and whose signing key is kept: see docs/migrating-from-filebrowser.md).
 */
export function configFromExport(doc: unknown, base: StoredSettings): ImportedConfig {
  if (!isDoc(doc) || !isDoc(field(doc, 'settings'))) {
    throw new CliError('not a File Browser config export: it has no "settings" object');
  }
  const s = docField(doc, 'settings');
  const auther = docField(doc, 'auther');
  const warnings: string[] = [];

  let authMethod = str(s, 'authMethod', 'json') || 'json';
  if (authMethod === 'hook') {
    warnings.push(
      'hook authentication is not supported: the auth method is now json; users sign in with the password of their last hook login',
    );
    authMethod = 'json';
  } else if (!(SUPPORTED_AUTH_METHODS as readonly string[]).includes(authMethod)) {
    throw new CliError(`unknown auth method "${authMethod}" in the settings`);
  }
  const recaptcha = field(auther, 'recaptcha');
  const header = str(auther, 'header');
  if (authMethod === 'proxy' && !header) throw new CliError('auth method proxy without a header in "auther"');

  const commands = emptyCommands();
  for (const [event, list] of Object.entries(docField(s, 'commands'))) {
    commands[event] = Array.isArray(list) ? list.map(String) : [];
  }
  const tus = docField(s, 'tus');
  const branding = docField(s, 'branding');
  const rules = rulesFrom(field(s, 'rules'));
  validateRules(rules, 'global');

  const settings: StoredSettings = {
    ...base,
    signup: bool(s, 'signup'),
    hideLoginButton: bool(s, 'hideLoginButton'),
    createUserDir: bool(s, 'createUserDir'),
    minimumPasswordLength: num(s, 'minimumPasswordLength', 0) || 12,
    userHomeBasePath: str(s, 'userHomeBasePath') || '/users',
    defaults: defaultsFrom(docField(s, 'defaults'), base.defaults),
    authMethod,
    rules,
    branding: {
      name: str(branding, 'name'),
      disableExternal: bool(branding, 'disableExternal'),
      disableUsedPercentage: bool(branding, 'disableUsedPercentage'),
      files: str(branding, 'files'),
      theme: str(branding, 'theme'),
      color: str(branding, 'color'),
    },
    tus: {
      chunkSize: num(tus, 'chunkSize', 0) || 10 * 1024 * 1024,
      retryCount: num(tus, 'retryCount', 5),
    },
    shell: strings(s, 'shell'),
    commands,
    unsafeCommands: cleanUnsafeCommands(strings(s, 'unsafeCommands'), (message) => new CliError(message)),
    // File Browser's exports have no such key: WebDAV stays on unless the file says off.
    webdav:
      str(s, 'webdav') === 'off' || str(s, 'webdav') === 'per-user' ? (str(s, 'webdav') as WebDavMode) : 'on',
    // Ours only: File Browser's exports have no trash, which then stays as the base has it.
    trash: isDoc(field(s, 'trash'))
      ? {
          enabled:
            typeof field(docField(s, 'trash'), 'enabled') === 'boolean'
              ? bool(docField(s, 'trash'), 'enabled')
              : base.trash.enabled,
          retentionDays: Math.max(
            0,
            Math.trunc(num(docField(s, 'trash'), 'retentionDays', base.trash.retentionDays)),
          ),
        }
      : base.trash,
    // Nor this one: account passwords stay accepted unless the file says false.
    webdavPasswords: bool(s, 'webdavPasswords', true),
    logoutPage: str(s, 'logoutPage') || '/login',
    fileMode: num(s, 'fileMode', 0) || base.fileMode,
    dirMode: num(s, 'dirMode', 0) || base.dirMode,
    auther: {
      recaptcha:
        isDoc(recaptcha) && str(recaptcha, 'key') && str(recaptcha, 'secret')
          ? {
              host: str(recaptcha, 'host') || DEFAULT_RECAPTCHA_HOST,
              key: str(recaptcha, 'key'),
              secret: str(recaptcha, 'secret'),
            }
          : null,
      header,
      command: str(auther, 'command'),
    },
  };
  const server = docField(doc, 'server');
  return {
    settings,
    server: {
      ...serverRecordFromOptions(optionsFromServerRecord(server)),
      authHook: str(server, 'authHook'),
    },
    warnings,
  };
}

/** The `server` object of `config export`, in File Browser's key order. */
export function serverToExport(record: Record<string, unknown>): Doc {
  const ordered: Doc = {};
  for (const k of SERVER_RECORD_KEYS) if (record[k] !== undefined) ordered[k] = record[k];
  return { ...ordered, ...record };
}

// ---------------------------------------------------------------------------------------------
// Users

/** One user of `users export`, with the bcrypt hash as `password`. */
export function userToExport(u: StoredUser): Doc {
  return {
    id: u.id,
    username: u.username,
    password: u.passwordHash,
    scope: u.scope,
    locale: u.locale,
    lockPassword: u.lockPassword,
    viewMode: u.viewMode,
    singleClick: u.singleClick,
    redirectAfterCopyMove: u.redirectAfterCopyMove,
    perm: { ...u.perm },
    commands: [...u.commands],
    sorting: { ...u.sorting },
    rules: rulesTo(u.rules),
    hideDotfiles: u.hideDotfiles,
    dateFormat: u.dateFormat,
    aceEditorTheme: u.aceEditorTheme,
    uploadsLimit: u.uploadsLimit,
    // Ours only: File Browser has no such field and ignores the key.
    webdav: u.webdav ?? false,
  };
}

export interface ImportedUser {
  /** The id in the file; 0 when absent. */
  id: number;
  user: NewUser;
}

const NO_PERMISSIONS: Permissions = {
  admin: false,
  execute: false,
  create: false,
  rename: false,
  modify: false,
  delete: false,
  share: false,
  download: false,
};

/** Reads one user of a `users export`, keeping the bcrypt hash verbatim. */
export function userFromExport(doc: unknown, position: number): ImportedUser {
  const where = `user ${position + 1} of the file`;
  if (!isDoc(doc)) throw new CliError(`${where} is not an object`);
  const username = str(doc, 'username').normalize('NFC');
  if (!username.trim()) throw new CliError(`${where} has no username`);
  const passwordHash = str(doc, 'password');
  if (!looksLikeBcryptHash(passwordHash)) {
    throw new CliError(`user "${username}": "password" must be a bcrypt hash as File Browser exports it`);
  }
  const id = num(doc, 'id', 0);
  if (!Number.isSafeInteger(id) || id < 0)
    throw new CliError(`user "${username}": invalid id ${String(field(doc, 'id'))}`);
  const rules = rulesFrom(field(doc, 'rules'));
  validateRules(rules, `user "${username}"`);
  const sorting = docField(doc, 'sorting');
  return {
    id,
    user: {
      username,
      passwordHash,
      scope: normaliseScope(str(doc, 'scope', '.') || '.'),
      locale: str(doc, 'locale') || 'en',
      lockPassword: bool(doc, 'lockPassword'),
      viewMode: str(doc, 'viewMode') || 'list',
      singleClick: bool(doc, 'singleClick'),
      redirectAfterCopyMove: bool(doc, 'redirectAfterCopyMove'),
      perm: permissionsFrom(docField(doc, 'perm'), NO_PERMISSIONS),
      commands: strings(doc, 'commands'),
      sorting: normaliseSorting({ by: str(sorting, 'by'), asc: bool(sorting, 'asc') }),
      rules,
      hideDotfiles: bool(doc, 'hideDotfiles'),
      dateFormat: bool(doc, 'dateFormat'),
      aceEditorTheme: str(doc, 'aceEditorTheme'),
      uploadsLimit: uploadsLimitFrom(doc, 5),
      webdav: bool(doc, 'webdav'),
    },
  };
}
