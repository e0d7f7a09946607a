import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberName } from '../src/files/archive/entries.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import { haveTool } from './tools.js';

/*
 * Class: zip-slip (File Browser's GHSA-gxjx-7m74-hcq8, then GHSA-83xp-526h-j3ww when its fix
 * turned `\` into `/`). A backslash is an ordinary character of a POSIX file name but a separator
 * for Windows extractors, so a stored name like `..\..\evil.txt` must never reach an archive as
 * something an extractor could read as a way out of its folder, on any platform.
 */

const hasTar = haveTool('tar', 'the archive names are read back with tar -t');
const hasUnzip = haveTool('unzip', 'the archive names are read back with unzip -Z1');

const HOSTILE = ['..\\..\\evil.txt', 'sub\\..\\..\\up.txt', '\\abs.txt', 'plain.txt'];
const EXPECTED = ['.._.._evil.txt', '_abs.txt', 'plain.txt', 'sub_.._.._up.txt'];

/** No member an extractor could place outside its folder, whichever separator it takes. */
function escapes(name: string): boolean {
  const segments = name.split(/[\\/]/);
  return name.startsWith('/') || name.startsWith('\\') || segments.includes('..') || /^[A-Za-z]:/.test(name);
}

describe('archive member names', () => {
  it('turn backslashes into _ and refuse anything that leaves the archive root', () => {
    expect(memberName('..\\..\\evil.txt')).toBe('.._.._evil.txt');
    expect(memberName('a/b\\..\\c.txt')).toBe('a/b_.._c.txt');
    for (const bad of ['', '/abs', '../x', 'a/../b', './a', 'a//b', 'a/.', '..']) {
      expect(() => memberName(bad), JSON.stringify(bad)).toThrow(/would escape the archive/);
    }
  });

  describe('of files stored with backslashes in their names', () => {
    let t: FilesApp;
    let bob: string;

    beforeAll(async () => {
      t = await startFilesApp();
      bob = await t.user('bob');
      const dir = path.join(t.root, 'bob', 'names');
      await fs.mkdir(dir);
      for (const name of HOSTILE) await fs.writeFile(path.join(dir, name), name);
    });
    afterAll(() => t.close());

    async function fetchArchive(algo: string): Promise<string> {
      const res = await t.get(bob, `/api/raw/names?algo=${algo}`);
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
      const file = path.join(t.base, `names.${algo}`);
      await fs.writeFile(file, res.rawPayload);
      return file;
    }

    it.skipIf(!hasTar)('never become a way out of a tar archive', async () => {
      const out = spawnSync('tar', ['-tf', await fetchArchive('tar')]);
      expect(out.status, out.stderr.toString()).toBe(0);
      const names = out.stdout.toString().trim().split('\n').sort();
      expect(names).toEqual(EXPECTED);
      expect(names.filter(escapes)).toEqual([]);
    });

    it.skipIf(!hasUnzip)('never become a way out of a zip archive', async () => {
      const names = execFileSync('unzip', ['-Z1', await fetchArchive('zip')])
        .toString()
        .trim()
        .split('\n')
        .sort();
      expect(names).toEqual(EXPECTED);
      expect(names.filter(escapes)).toEqual([]);
    });
  });
});
