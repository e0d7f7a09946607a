import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../src/config/types.js';
import { fileAccessFor, type FileAccess } from '../src/files/access/access.js';
import { checkArgumentPaths } from '../src/runner/arguments.js';
import { CommandRefused } from '../src/runner/refusal.js';
import type { StoredUser } from '../src/store/users.js';
import { startTestApp, type TestApp } from './helpers.js';

describe('argument confinement', () => {
  let t: TestApp;
  let bob: StoredUser;
  let access: FileAccess;
  let home: string;

  const refusal = async (args: string[], cwd = '/') => {
    try {
      await checkArgumentPaths(access, cwd, args);
      return undefined;
    } catch (err) {
      if (err instanceof CommandRefused) return err.message;
      throw err;
    }
  };

  beforeAll(async () => {
    t = await startTestApp({ disableExec: false } as Partial<ServerConfig>);
    bob = await t.createUser({
      username: 'bob',
      scope: '/users/bob',
      rules: [{ regex: false, allow: false, path: '/private', regexp: null }],
    });
    home = await fs.realpath(path.join(t.root, 'users/bob'));
    await fs.mkdir(path.join(home, 'a/b'), { recursive: true });
    await fs.mkdir(path.join(home, 'private'));
    await fs.writeFile(path.join(t.outside, 'secret'), 'x');
    await fs.symlink(t.outside, path.join(home, 'out'));
    await fs.symlink('..', path.join(home, 'up'));
    await fs.symlink('.', path.join(home, 'self'));
    await fs.symlink('a/b', path.join(home, 'deep'));
    await fs.symlink(path.join(t.outside, 'not-yet'), path.join(home, 'dangling'));
    await fs.symlink('private', path.join(home, 'hidden'));
    access = await fileAccessFor(t.ctx, bob);
  });

  afterAll(() => t.close());

  it('checks the arguments of a program that appends to them as the start of a name (split, csplit)', async () => {
    const prefixes = async (args: string[]) => {
      try {
        await checkArgumentPaths(access, '/', args, { prefixes: true });
        return undefined;
      } catch (err) {
        if (err instanceof CommandRefused) return err.message;
        throw err;
      }
    };
    // The scope folder as a prefix names its siblings (`bobaa`, `bob2/...`).
    expect(await prefixes(['-l', '1', 'src', home])).toMatch(/is outside your scope/);
    expect(await prefixes(['-f', home, 'src', '2'])).toMatch(/is outside your scope/);
    // A prefix inside it, or the scope folder with its slash, names pieces inside.
    expect(await prefixes(['-l', '1', 'src', 'a/part_'])).toBeUndefined();
    expect(await prefixes(['-l', '1', 'src', `${home}/`])).toBeUndefined();
    expect(await refusal(['-l', '1', 'src', home])).toBeUndefined();
  });

  it('accepts paths that stay inside the scope', async () => {
    expect(
      await refusal([
        'hello.txt',
        'a/b/c',
        'a/../a/b',
        'deep/..',
        'deep/../b',
        '.',
        `${home}/a`,
        home,
        '~',
        '~/a',
        '-la',
        '--color=auto',
        'https://example.com/x',
        'new-file',
      ]),
    ).toBeUndefined();
    expect(await refusal(['../..', '../b'], '/a/b')).toBeUndefined();
  });

  it.each([
    ['..'],
    ['../bob'],
    ['a/../../x'],
    ['/etc/passwd'],
    ['/'],
    ['out'],
    ['out/secret'],
    // Even a walk that only passes outside on its way back in is refused.
    ['up/bob'],
    ['self/..'],
    ['dangling'],
    ['~root'],
    ['~root/x'],
    ['--file=/etc/passwd'],
    ['--file=../x'],
    ['if=/etc/passwd'],
    ['-f/etc/passwd'],
    ['-Iout'],
    ['@/etc/passwd'],
    ['file:///etc/passwd'],
    ['x:/etc/passwd'],
  ])('refuses %s', async (arg) => {
    expect(await refusal([arg])).toMatch(
      /^Command not allowed: the path .* (is outside your scope|names another user’s home folder)\.$/,
    );
  });

  it('refuses going above the scope from a subfolder, and other users’ files', async () => {
    expect(await refusal(['../../..'], '/a/b')).toMatch(/outside your scope/);
    expect(await refusal([path.join(t.outside, 'secret')])).toMatch(/outside your scope/);
    expect(await refusal([path.join(t.root, 'users/alice')])).toMatch(/outside your scope/);
  });

  it('refuses paths hidden by the rules, through links too', async () => {
    expect(await refusal(['private'])).toBe(
      'Command not allowed: the path "private" is hidden by your rules.',
    );
    expect(await refusal(['private/x'])).toMatch(/hidden by your rules/);
    expect(await refusal(['hidden'])).toMatch(/hidden by your rules/);
    expect(await refusal([`${home}/private`])).toMatch(/hidden by your rules/);
  });

  it('refuses absurdly many candidates', async () => {
    expect(await refusal(Array.from({ length: 2000 }, (_, i) => `f${i}`))).toBe(
      'Command not allowed: too many arguments.',
    );
  });
});
