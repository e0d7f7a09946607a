import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectCaseInsensitive } from './case.js';
import { RuleChecker } from './rules.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-case-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const caseSensitiveHere = async () => {
  await fs.writeFile(path.join(dir, 'x'), '');
  const sensitive = await fs.stat(path.join(dir, 'X')).then(
    () => false,
    () => true,
  );
  await fs.rm(path.join(dir, 'x'));
  return sensitive;
};

describe('detectCaseInsensitive', () => {
  it('answers as the file system behaves, from an existing entry or a probe it removes', async () => {
    const expected = !(await caseSensitiveHere());
    expect(await detectCaseInsensitive(dir)).toBe(expected);
    expect(await fs.readdir(dir)).toEqual([]);
    await fs.writeFile(path.join(dir, '123'), '');
    await fs.writeFile(path.join(dir, 'Photos'), '');
    expect(await detectCaseInsensitive(dir)).toBe(expected);
    expect((await fs.readdir(dir)).sort()).toEqual(['123', 'Photos']);
  });

  it('knows a folder holding two names that differ only in case is case-sensitive', async () => {
    if (!(await caseSensitiveHere())) return;
    await fs.writeFile(path.join(dir, 'Readme'), '');
    await fs.writeFile(path.join(dir, 'rEADME'), '');
    expect(await detectCaseInsensitive(dir)).toBe(false);
  });
});

describe('rules on a case-insensitive root', () => {
  const deny = (p: string) => ({ regex: false, allow: false, path: p, regexp: null });
  it('compare rule paths without case, still on segment boundaries; regex rules never fold', () => {
    const folded = new RuleChecker([deny('/Private')], [], false, { caseInsensitive: true });
    expect(folded.check('/private/a.txt')).toBe(false);
    expect(folded.check('/PRIVATE')).toBe(false);
    expect(folded.check('/private_ok')).toBe(true);
    const exact = new RuleChecker([deny('/Private')], [], false);
    expect(exact.check('/private/a.txt')).toBe(true);
    const re = new RuleChecker(
      [{ regex: true, allow: false, path: '', regexp: { raw: 'Secret' } }],
      [],
      false,
      {
        caseInsensitive: true,
      },
    );
    expect(re.check('/secret')).toBe(true);
    expect(re.check('/Secret')).toBe(false);
  });
});
