import type { UserDefaults } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import { noPermissions } from '../../../test/fixtures';
import { newUserFrom, routeAfterCreate } from './new-user';

const defaults: UserDefaults = {
  scope: '/shared',
  locale: 'de',
  viewMode: 'mosaic',
  singleClick: true,
  redirectAfterCopyMove: false,
  sorting: { by: 'size', asc: true },
  perm: { ...noPermissions, download: true },
  commands: ['ls'],
  hideDotfiles: true,
  dateFormat: false,
  aceEditorTheme: 'monokai',
  uploadsLimit: 3,
};

describe('newUserFrom', () => {
  it('starts from the defaults with id 0, no name, password, rules or lock', () => {
    const user = newUserFrom(defaults);
    expect(user).toMatchObject({
      id: 0,
      username: '',
      password: '',
      rules: [],
      lockPassword: false,
      scope: '/shared',
      locale: 'de',
      uploadsLimit: 3,
    });
  });

  it('does not share nested objects with the defaults', () => {
    const user = newUserFrom(defaults);
    user.perm.admin = true;
    user.commands.push('rm');
    expect(defaults.perm.admin).toBe(false);
    expect(defaults.commands).toEqual(['ls']);
  });
});

describe('routeAfterCreate', () => {
  it('follows the Location of the new user', () => {
    expect(routeAfterCreate('/settings/users/5', '')).toBe('/settings/users/5');
    expect(routeAfterCreate('https://files.example/fb/settings/users/7', '/fb')).toBe('/settings/users/7');
    expect(routeAfterCreate('/fb/settings/users/8', '/fb')).toBe('/settings/users/8');
  });

  it('falls back to the list', () => {
    expect(routeAfterCreate(null, '')).toBe('/settings/users');
    expect(routeAfterCreate('/api/users/5', '')).toBe('/settings/users');
  });
});
