import { THEMES, WEBDAV_MODES, type WebDavMode } from '@filebrowser/contract';
import type { OptionSpec, OptionValues } from '../config/options.js';
import type { StoredSettings } from '../store/settings.js';
import { cleanUnsafeCommands } from '../runner/options.js';
import { CliError } from './io.js';
import { applyUserDefaults } from './user-flags.js';

/** Auth methods this server can run; `hook` is File Browser's, and not supported here. */
export const SUPPORTED_AUTH_METHODS = ['json', 'proxy', 'noauth'] as const;
export const DEFAULT_RECAPTCHA_HOST = 'https://www.google.com';

/** Global-settings flags of `config init|set` (File Browser's names). */
export const SETTINGS_OPTIONS: OptionSpec[] = [
  { name: 'signup', short: 's', kind: 'boolean', description: 'let people create their own account' },
  { name: 'hideLoginButton', kind: 'boolean', description: 'hide the login button on public pages' },
  { name: 'createUserDir', kind: 'boolean', description: 'give new users their own home folder' },
  {
    name: 'userHomeBasePath',
    kind: 'string',
    description: 'folder holding the home folders (default /users)',
  },
  {
    name: 'minimumPasswordLength',
    kind: 'uint',
    description: 'minimum password length in bytes (default 12)',
  },
  { name: 'shell', kind: 'string', description: 'shell that runs hook commands, e.g. "bash -c" (dangerous)' },
  {
    name: 'unsafeCommands',
    kind: 'list',
    description:
      'deny-listed commands (shells, env, xargs, find -exec…) users may run anyway; DANGEROUS: they can run anything (comma-separated, "" for none)',
  },
  {
    name: 'webdav',
    kind: 'string',
    choices: WEBDAV_MODES,
    description: 'WebDAV at /dav/: on (default), off, or per-user (only users an administrator allowed)',
  },
  {
    name: 'webdavPasswords',
    kind: 'boolean',
    description: 'WebDAV takes account passwords as well as API tokens (default true; false: tokens only)',
  },
  { name: 'fileMode', kind: 'mode', description: 'mode of created files (default 0640)' },
  { name: 'dirMode', kind: 'mode', description: 'mode of created folders (default 0750)' },
  {
    name: 'auth.method',
    kind: 'string',
    choices: ['json', 'proxy', 'hook', 'noauth'],
    description: 'json (default), proxy or noauth',
  },
  {
    name: 'auth.header',
    kind: 'string',
    description: 'request header naming the user, for auth.method=proxy',
  },
  { name: 'auth.command', kind: 'string', description: 'kept for File Browser compatibility (hook auth)' },
  { name: 'auth.logoutPage', kind: 'string', description: 'page shown after logout (default /login)' },
  {
    name: 'recaptcha.host',
    kind: 'string',
    description: `reCAPTCHA host (default ${DEFAULT_RECAPTCHA_HOST})`,
  },
  { name: 'recaptcha.key', kind: 'string', description: 'reCAPTCHA site key' },
  { name: 'recaptcha.secret', kind: 'string', description: 'reCAPTCHA secret' },
  { name: 'branding.name', kind: 'string', description: 'name shown instead of "File Browser"' },
  { name: 'branding.theme', kind: 'string', choices: THEMES, description: 'theme: "", light or dark' },
  { name: 'branding.color', kind: 'string', description: 'theme colour' },
  { name: 'branding.files', kind: 'path', description: 'folder with img/ and custom.css overrides' },
  { name: 'branding.disableExternal', kind: 'boolean', description: 'hide links to external sites' },
  { name: 'branding.disableUsedPercentage', kind: 'boolean', description: 'hide the disk usage bar' },
  { name: 'tus.chunkSize', kind: 'count', description: 'upload chunk size in bytes (default 10485760)' },
  { name: 'tus.retryCount', kind: 'uint', max: 65535, description: 'upload retries (default 5)' },
];

/** Splits "bash -c" into words, as File Browser stored `--shell`. */
export function shellWords(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/** Applies the given settings and user-default flags; flags that were not typed change nothing. */
export function applySettingsFlags(current: StoredSettings, values: OptionValues): StoredSettings {
  const s: StoredSettings = structuredClone(current);
  const str = (name: string) => values[name] as string | undefined;
  const bool = (name: string) => values[name] as boolean | undefined;
  const num = (name: string) => values[name] as number | undefined;

  s.signup = bool('signup') ?? s.signup;
  s.hideLoginButton = bool('hideLoginButton') ?? s.hideLoginButton;
  s.createUserDir = bool('createUserDir') ?? s.createUserDir;
  s.userHomeBasePath = str('userHomeBasePath') ?? s.userHomeBasePath;
  s.minimumPasswordLength = num('minimumPasswordLength') ?? s.minimumPasswordLength;
  if (str('shell') !== undefined) s.shell = shellWords(str('shell')!);
  const unsafe = values.unsafeCommands as string[] | undefined;
  if (unsafe !== undefined) {
    s.unsafeCommands = cleanUnsafeCommands(
      unsafe.flatMap((entry) => entry.split(/\s+/)).filter(Boolean),
      (message) => new CliError(message),
    );
  }
  s.webdav = (str('webdav') as WebDavMode | undefined) ?? s.webdav;
  s.webdavPasswords = bool('webdavPasswords') ?? s.webdavPasswords;
  s.fileMode = num('fileMode') ?? s.fileMode;
  s.dirMode = num('dirMode') ?? s.dirMode;
  s.logoutPage = str('auth.logoutPage') ?? s.logoutPage;
  s.branding = {
    ...s.branding,
    name: str('branding.name') ?? s.branding.name,
    theme: str('branding.theme') ?? s.branding.theme,
    color: str('branding.color') ?? s.branding.color,
    files: str('branding.files') ?? s.branding.files,
    disableExternal: bool('branding.disableExternal') ?? s.branding.disableExternal,
    disableUsedPercentage: bool('branding.disableUsedPercentage') ?? s.branding.disableUsedPercentage,
  };
  s.tus = {
    chunkSize: num('tus.chunkSize') ?? s.tus.chunkSize,
    retryCount: num('tus.retryCount') ?? s.tus.retryCount,
  };
  s.defaults = applyUserDefaults(s.defaults, values);
  applyAuthFlags(s, values);
  return s;
}

function applyAuthFlags(s: StoredSettings, values: OptionValues): void {
  const method = (values['auth.method'] as string | undefined) ?? s.authMethod;
  if (method === 'hook') {
    throw new CliError('auth.method "hook" is not supported by this server: use json, proxy or noauth');
  }
  s.authMethod = method;
  s.auther = {
    ...s.auther,
    header: (values['auth.header'] as string | undefined) ?? s.auther.header,
    command: (values['auth.command'] as string | undefined) ?? s.auther.command,
  };
  if (method === 'proxy' && !s.auther.header) {
    throw new CliError('auth.method "proxy" needs --auth.header (the header naming the user)');
  }
  const given = ['recaptcha.host', 'recaptcha.key', 'recaptcha.secret'].some((n) => values[n] !== undefined);
  if (given) {
    const current = s.auther.recaptcha ?? { host: DEFAULT_RECAPTCHA_HOST, key: '', secret: '' };
    const next = {
      host: (values['recaptcha.host'] as string | undefined) ?? (current.host || DEFAULT_RECAPTCHA_HOST),
      key: (values['recaptcha.key'] as string | undefined) ?? current.key,
      secret: (values['recaptcha.secret'] as string | undefined) ?? current.secret,
    };
    // File Browser keeps reCAPTCHA only when both the key and the secret are set.
    s.auther.recaptcha = next.key && next.secret ? next : null;
  }
}
