import type { Permissions, Settings, TokenUser } from '@filebrowser/contract';

export const noPermissions: Permissions = {
  admin: false,
  execute: false,
  create: false,
  rename: false,
  modify: false,
  delete: false,
  share: false,
  download: false,
};

export function tokenUser(perm: Partial<Permissions> = {}, overrides: Partial<TokenUser> = {}): TokenUser {
  return {
    id: 2,
    locale: 'en',
    viewMode: 'list',
    singleClick: false,
    redirectAfterCopyMove: false,
    perm: { ...noPermissions, ...perm },
    commands: [],
    lockPassword: false,
    hideDotfiles: false,
    dateFormat: false,
    username: 'alice',
    aceEditorTheme: '',
    ...overrides,
  };
}

/** A session token the client can decode (the signature is never checked on this side). */
export function fakeToken(user: TokenUser, expiresInSeconds = 3600): string {
  const encode = (value: unknown) =>
    btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const now = Math.floor(Date.now() / 1000);
  return `${encode({ alg: 'HS256' })}.${encode({ user, iss: 'File Browser', exp: now + expiresInSeconds, iat: now })}.sig`;
}

/** Global settings as GET /api/settings answers them, with `overrides` on top. */
export function settingsFixture(overrides: Partial<Settings> = {}): Settings {
  return {
    signup: false,
    hideLoginButton: true,
    createUserDir: false,
    minimumPasswordLength: 12,
    userHomeBasePath: '/users',
    defaults: {
      scope: '.',
      locale: 'en',
      viewMode: 'mosaic',
      singleClick: false,
      redirectAfterCopyMove: true,
      sorting: { by: 'name', asc: false },
      perm: { ...noPermissions, create: true, download: true },
      commands: [],
      hideDotfiles: false,
      dateFormat: false,
      aceEditorTheme: '',
      uploadsLimit: 5,
    },
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
    tus: { chunkSize: 10485760, retryCount: 5 },
    shell: [],
    commands: { before_save: [], after_save: [] },
    unsafeCommands: [],
    webdav: 'on',
    trash: { enabled: true, retentionDays: 30 },
    audit: { retentionDays: 90 },
    webdavPasswords: true,
    ...overrides,
  };
}
