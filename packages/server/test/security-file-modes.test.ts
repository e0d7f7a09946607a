import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

/*
 * Class: the server's own files readable by every account on the host (File Browser's
 * GHSA-jj2r-455p-5gvf: the database took the umask, typically 0644). The database holds password
 * hashes, sessions and the key that signs tokens.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // A write makes SQLite create its -wal and -shm files.
  await t.createUser({ username: 'dora' });
});
afterAll(() => t.close());

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('the database', () => {
  it('and its side files are never readable by other accounts, in a folder only the server enters', () => {
    for (const file of [t.dbFile, `${t.dbFile}-wal`, `${t.dbFile}-shm`]) {
      expect(fs.existsSync(file), file).toBe(true);
      expect(modeOf(file) & 0o007, `${path.basename(file)} is ${modeOf(file).toString(8)}`).toBe(0);
    }
    expect(modeOf(path.dirname(t.dbFile))).toBe(0o700);
  });
});
