import { describe, expect, it } from 'vitest';
import {
  checkPassword,
  hashPassword,
  looksLikeBcryptHash,
  MAX_PASSWORD_BYTES,
  randomPassword,
  validatePassword,
} from './passwords.js';

const message = (fn: () => void): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('validatePassword (contract 4.4)', () => {
  it('counts bytes against the minimum length, 12 when the setting is 0', () => {
    expect(message(() => validatePassword('eleven-char', 0))).toBe(
      'password is too short, minimum length is 12',
    );
    expect(message(() => validatePassword('twelve-chars', 0))).toBe('');
    expect(message(() => validatePassword('twelve-chars', 20))).toBe(
      'password is too short, minimum length is 20',
    );
    // Six characters, twelve bytes.
    expect(message(() => validatePassword('éééééé', 12))).toBe('');
  });

  it('refuses common passwords from the word list, exactly as typed', () => {
    expect(message(() => validatePassword('password1234', 12))).toBe('password is too easy');
    expect(message(() => validatePassword('qwertyuiop123', 12))).toBe('password is too easy');
    expect(message(() => validatePassword('a-far-less-common-phrase', 12))).toBe('');
  });

  it('refuses passwords bcrypt would cut short', () => {
    expect(message(() => validatePassword('x'.repeat(MAX_PASSWORD_BYTES), 12))).toBe('');
    expect(message(() => validatePassword('x'.repeat(MAX_PASSWORD_BYTES + 1), 12))).toBe(
      'password is too long, maximum length is 72 bytes',
    );
  });
});

describe('hashing', () => {
  it('hashes with bcrypt cost 10 and checks the result', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^\$2[aby]\$10\$/);
    expect(looksLikeBcryptHash(hash)).toBe(true);
    expect(await checkPassword('correct horse battery', hash)).toBe(true);
    expect(await checkPassword('correct horse battery!', hash)).toBe(false);
  });

  it("accepts File Browser's $2a$10$ hashes", async () => {
    // Go writes the same algorithm with the $2a$ prefix; users imported from File Browser keep those hashes.
    const goHash = (await hashPassword('filebrowser-admin')).replace(/^\$2b\$/, '$2a$');
    expect(goHash.startsWith('$2a$10$')).toBe(true);
    expect(await checkPassword('filebrowser-admin', goHash)).toBe(true);
  });

  it('never matches an empty hash, a broken hash or an over-long password', async () => {
    expect(await checkPassword('anything', '')).toBe(false);
    expect(await checkPassword('anything', 'not-a-hash')).toBe(false);
    const hash = await hashPassword('y'.repeat(72));
    expect(await checkPassword('y'.repeat(73), hash)).toBe(false);
  });

  it('makes random passwords of the asked size', () => {
    expect(randomPassword(12)).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(randomPassword(12)).not.toBe(randomPassword(12));
  });
});
