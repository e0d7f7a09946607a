import type { TokenClaims } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import { decodeToken, isExpired, tryDecodeToken } from './token';

function base64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

const claims: TokenClaims = {
  user: {
    id: 7,
    locale: 'pt-br',
    viewMode: 'mosaic',
    singleClick: false,
    redirectAfterCopyMove: true,
    perm: {
      admin: false,
      execute: false,
      create: true,
      rename: true,
      modify: true,
      delete: false,
      share: true,
      download: true,
    },
    commands: [],
    lockPassword: false,
    hideDotfiles: true,
    dateFormat: false,
    // Non-ASCII and characters that come out as "-" and "_" in base64url.
    username: 'Jöns~~~>>>??',
    aceEditorTheme: '',
  },
  iss: 'File Browser',
  exp: 2_000_000_000,
  iat: 1_999_990_000,
};

const token = (payload: unknown) =>
  `${base64Url('{"alg":"HS256","typ":"JWT"}')}.${base64Url(JSON.stringify(payload))}.sig`;

describe('decodeToken', () => {
  it('reads the claims of a token, UTF-8 and base64url included', () => {
    expect(decodeToken(token(claims))).toEqual(claims);
  });

  it('rejects tokens that are not three parts', () => {
    expect(() => decodeToken('abc')).toThrow();
    expect(() => decodeToken('a.b')).toThrow();
  });

  it('rejects payloads without a user or an expiry', () => {
    expect(() => decodeToken(token({ exp: 1 }))).toThrow();
    expect(() => decodeToken(token({ user: claims.user }))).toThrow();
    expect(() => decodeToken('a.%%%.c')).toThrow();
  });

  it('has a forgiving variant', () => {
    expect(tryDecodeToken('nonsense')).toBeUndefined();
    expect(tryDecodeToken(token(claims))?.user.username).toBe('Jöns~~~>>>??');
  });
});

describe('isExpired', () => {
  it('compares the expiry with the clock', () => {
    expect(isExpired(claims, claims.exp * 1000 - 1)).toBe(false);
    expect(isExpired(claims, claims.exp * 1000)).toBe(true);
  });
});
