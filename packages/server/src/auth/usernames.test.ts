import { describe, expect, it } from 'vitest';
import { checkUsername, mixedScripts, usernameKey, usernameSkeleton } from './usernames.js';

const existing = [
  { id: 1, username: 'admin' },
  { id: 2, username: 'ace' },
  { id: 3, username: 'login' },
];

const refusal = (name: string, others = existing): string => {
  try {
    checkUsername(name, others);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('usernameKey', () => {
  it('folds case and compatibility forms, and composes accents', () => {
    expect(usernameKey('ADMIN')).toBe('admin');
    expect(usernameKey('ａｄｍｉｎ')).toBe('admin');
    expect(usernameKey('Ａｄｍｉｎ')).toBe('admin');
    expect(usernameKey('ﬁona')).toBe('fiona');
    expect(usernameKey('Jose\u0301')).toBe(usernameKey('José'));
    expect(usernameKey('ÉLODIE')).toBe('élodie');
  });

  it('keeps names that differ to the eye apart', () => {
    expect(usernameKey('admın')).not.toBe('admin');
    expect(usernameKey('аdmin')).not.toBe('admin');
  });
});

describe('usernameSkeleton', () => {
  it('maps look-alike letters of Latin, Cyrillic, Greek and Armenian to the Latin they imitate', () => {
    for (const name of ['admın', 'аdmin', 'αdmin', 'ａｄｍｉｎ', 'admіn']) {
      expect(usernameSkeleton(name), name).toBe(usernameSkeleton('admin'));
    }
    expect(usernameSkeleton('асе')).toBe(usernameSkeleton('ace'));
    expect(usernameSkeleton('Iogin')).toBe(usernameSkeleton('login'));
    expect(usernameSkeleton('l0gin')).toBe(usernameSkeleton('login'));
    expect(usernameSkeleton('օscar')).toBe(usernameSkeleton('oscar'));
  });

  it('keeps visibly different names apart', () => {
    expect(usernameSkeleton('admín')).not.toBe(usernameSkeleton('admin'));
    expect(usernameSkeleton('adrian')).not.toBe(usernameSkeleton('admin'));
    expect(usernameSkeleton('Иван')).not.toBe(usernameSkeleton('admin'));
    // A capital I reads as a small L, so "ADMIN" is "admln" to the eye: a new "admln" is refused
    // beside an existing "ADMIN", and "ADMIN" beside "admin" is the same account (409).
    expect(usernameSkeleton('ADMIN')).toBe(usernameSkeleton('admln'));
  });
});

describe('mixedScripts', () => {
  it.each([
    ['admin', []],
    ['José-2', []],
    ['Иван', []],
    ['Ελένη', []],
    ['山田', []],
    ['やまだ太郎', []],
    ['yamada山田', []],
    ['김민준', []],
    ['Kim김민준', []],
    ['аdmin', ['Cyrillic', 'Latin']],
    ['αdmin', ['Greek', 'Latin']],
    ['Иванα', ['Cyrillic', 'Greek']],
    ['김やまだ', ['Hangul', 'Hiragana']],
  ])('%s mixes %j', (name, scripts) => {
    expect(mixedScripts(name).sort()).toEqual([...scripts].sort());
  });
});

describe('checkUsername', () => {
  it('answers acceptable names in NFC', () => {
    expect(checkUsername('Jose\u0301', existing)).toBe('José');
    for (const name of ['bob', 'mary.o-brien_2', 'Иван', 'Ελένη', '山田太郎', 'adm1n', 'ad min']) {
      expect(checkUsername(name, existing)).toBe(name);
    }
  });

  it('leaves a name with the same key as an existing one to the duplicate check (409)', () => {
    expect(checkUsername('ADMIN', existing)).toBe('ADMIN');
    expect(checkUsername('Admin', existing)).toBe('Admin');
  });

  it('allows a look-alike of nobody, and a rename that keeps looking like itself', () => {
    expect(checkUsername('admın', [])).toBe('admın');
    expect(
      checkUsername(
        'Login',
        existing.filter((u) => u.id !== 3),
      ),
    ).toBe('Login');
  });

  it.each([
    ['', 'username is required'],
    ['   ', 'username is required'],
    ['x'.repeat(256), 'username is too long'],
    ['Admin\u200b', 'invisible or control character (U+200B)'],
    ['\u200badmin', 'invisible or control character (U+200B)'],
    ['admin\u202e', 'invisible or control character (U+202E)'],
    ['\u2066admin\u2069', 'invisible or control character (U+2066)'],
    ['adm\u00adin', 'invisible or control character (U+00AD)'],
    ['adm\u034fin', 'invisible or control character (U+034F)'],
    ['ad\u3164min', 'invisible or control character (U+3164)'],
    ['admin\ufe0f', 'invisible or control character (U+FE0F)'],
    ['admin\u0007', 'invisible or control character (U+0007)'],
    ['ad\nmin', 'invisible or control character (U+000A)'],
    ['admin\u2028', 'invisible or control character (U+2028)'],
    ['\u2800admin', 'invisible or control character (U+2800)'],
    ['admin\ue000', 'invisible or control character (U+E000)'],
    ['a/b', 'not allowed (/ or \\)'],
    ['a\\b', 'not allowed (/ or \\)'],
    [' admin', 'must not begin or end with a space'],
    ['admin ', 'must not begin or end with a space'],
    ['ａｄｍｉｎ', 'compatibility characters (such as full-width letters or ligatures): write it as "admin"'],
    ['ad\u00a0min', 'compatibility characters'],
    ['ﬁona', 'write it as "fiona"'],
    ['аdmin', 'username mixes scripts (Cyrillic, Latin)'],
    ['admіn', 'username mixes scripts'],
    ['αdmin', 'username mixes scripts (Greek, Latin)'],
    ['admın', 'username looks too much like an existing username'],
    ['асе', 'username looks too much like an existing username'],
    ['Iogin', 'username looks too much like an existing username'],
    ['l0gin', 'username looks too much like an existing username'],
  ])('refuses %j', (name, message) => {
    expect(refusal(name)).toContain(message);
  });
});
