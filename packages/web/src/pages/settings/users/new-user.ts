import type { User, UserDefaults } from '@filebrowser/contract';

/** A new user starts from the defaults, with no name, password, rules or password lock. */
export function newUserFrom(defaults: UserDefaults): User {
  return {
    id: 0,
    username: '',
    password: '',
    scope: defaults.scope,
    locale: defaults.locale,
    lockPassword: false,
    viewMode: defaults.viewMode,
    singleClick: defaults.singleClick,
    redirectAfterCopyMove: defaults.redirectAfterCopyMove,
    perm: { ...defaults.perm },
    commands: [...defaults.commands],
    sorting: { ...defaults.sorting },
    rules: [],
    hideDotfiles: defaults.hideDotfiles,
    dateFormat: defaults.dateFormat,
    aceEditorTheme: defaults.aceEditorTheme,
    ...(defaults.uploadsLimit !== undefined && { uploadsLimit: defaults.uploadsLimit }),
    ...(defaults.quota !== undefined && { quota: defaults.quota }),
  };
}

/**
 * The page to open after creating a user: the Location the server answered (a UI route such as
 * /settings/users/5, possibly absolute or under the base URL), else the user list.
 */
export function routeAfterCreate(location: string | null, baseURL: string): string {
  if (!location) return '/settings/users';
  let path = location;
  try {
    path = new URL(location, 'http://placeholder.invalid').pathname;
  } catch {
    return '/settings/users';
  }
  if (baseURL && path.startsWith(`${baseURL}/`)) path = path.slice(baseURL.length);
  return /^\/settings\/users\/\d+$/.test(path) ? path : '/settings/users';
}
