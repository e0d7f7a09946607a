import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAnchored, Pinned } from './anchor.js';

describe.runIf(isAnchored())('descriptor paths', () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-anchor-')));
    await fs.writeFile(path.join(root, 'a.txt'), 'a');
  });
  afterAll(() => fs.rm(root, { recursive: true, force: true }));

  // A listing stats every entry through its folder's descriptor path; `/proc/self` would be one
  // more link for the kernel to follow on each of them (docs/performance.md).
  it('names a pinned folder and its entries through /proc/<pid>/fd, reaching the folder held', async () => {
    const dir = await Pinned.folder(root);
    try {
      expect(dir.path).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`));
      expect(dir.child('a.txt')).toBe(`${dir.path}/a.txt`);
      expect(dir.real).toBe(root);
      // The folder is held, not named: renamed away, the same path still reaches it.
      await fs.rename(root, `${root}-moved`);
      try {
        expect(await fs.readFile(dir.child('a.txt'), 'utf8')).toBe('a');
      } finally {
        await fs.rename(`${root}-moved`, root);
      }
    } finally {
      await dir.close();
    }
  });
});
