import { describe, expect, it } from 'vitest';
import { tokenUser } from '../test/fixtures';
import { afterLoginTarget, decideAccess, loginRedirect, unknownRouteTarget } from './guards';

const member = tokenUser();
const sharer = tokenUser({ share: true, download: true });
const admin = tokenUser({ admin: true });

describe('decideAccess', () => {
  it('lets anyone see public routes', () => {
    expect(decideAccess('public', null, '/403')).toEqual({ allow: true });
    expect(decideAccess('public', member, '/403')).toEqual({ allow: true });
  });

  it('sends signed-out visitors to the login screen with the wanted path', () => {
    for (const access of ['user', 'share', 'admin'] as const) {
      expect(decideAccess(access, null, '/files/a b/?x=1')).toEqual({
        allow: false,
        redirect: '/login?redirect=%2Ffiles%2Fa%20b%2F%3Fx%3D1',
      });
    }
  });

  it('sends a signed-in user away from the login screen to the files', () => {
    expect(decideAccess('guest', null, '/login')).toEqual({ allow: true });
    expect(decideAccess('guest', member, '/login')).toEqual({ allow: false, redirect: '/files/' });
  });

  it('continues to the redirect query once signed in', () => {
    const wanted = `/login?redirect=${encodeURIComponent('/settings/profile')}`;
    expect(decideAccess('guest', member, wanted)).toEqual({ allow: false, redirect: '/settings/profile' });
  });

  it('sends non-admins on admin routes to /403', () => {
    expect(decideAccess('admin', member, '/settings/users')).toEqual({ allow: false, redirect: '/403' });
    expect(decideAccess('admin', admin, '/settings/users')).toEqual({ allow: true });
  });

  it('needs the share permission for share management', () => {
    expect(decideAccess('share', member, '/settings/shares')).toEqual({ allow: false, redirect: '/403' });
    expect(decideAccess('share', sharer, '/settings/shares')).toEqual({ allow: true });
  });

  it('lets any signed-in user see user routes', () => {
    expect(decideAccess('user', member, '/files/')).toEqual({ allow: true });
  });
});

describe('afterLoginTarget', () => {
  it('defaults to the file browser', () => {
    expect(afterLoginTarget(null)).toBe('/files/');
    expect(afterLoginTarget('')).toBe('/files/');
  });

  it('follows local paths only', () => {
    expect(afterLoginTarget('/files/docs/')).toBe('/files/docs/');
    expect(afterLoginTarget('https://evil.example/')).toBe('/files/');
    expect(afterLoginTarget('//evil.example/')).toBe('/files/');
    expect(afterLoginTarget('/\\evil.example/')).toBe('/files/');
  });
});

describe('loginRedirect', () => {
  it('encodes the wanted path', () => {
    expect(loginRedirect('/files/?a=b&c')).toBe('/login?redirect=%2Ffiles%2F%3Fa%3Db%26c');
  });
});

describe('unknownRouteTarget', () => {
  it('takes unknown paths as file paths', () => {
    expect(unknownRouteTarget('/docs/a.txt')).toBe('/files/docs/a.txt');
    expect(unknownRouteTarget('/')).toBe('/files/');
  });
});
