import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { openPinCount } from '../src/files/access/anchor.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import { haveTool } from './tools.js';

/*
 * Class: a folder exchanged for a symbolic link to the outside while requests run (TOCTOU).
 * Another process swaps a folder of the user's and a link to a folder outside the scope with
 * renameat2(RENAME_EXCHANGE), as fast as it can, while thousands of downloads, listings, creates,
 * replacements and folder creations go through that folder. Whatever moment a request is caught
 * at, no byte from outside may be served and no file may appear outside.
 */

const SECRET = 'OUTSIDE-SECRET-BYTES';
const REQUESTS = 2000;
const IN_FLIGHT = 16;
const hasPython = haveTool('python3', 'the swap tests exchange folders with renameat2 through python3');

let t: FilesApp | undefined;
let exchanger: ChildProcess | undefined;

afterEach(async () => {
  exchanger?.kill('SIGKILL');
  exchanger = undefined;
  await t?.close();
  t = undefined;
});

/** Starts swapping `a` and `b`; resolves once the first exchange happened. */
async function startExchanging(a: string, b: string): Promise<{ stop(): Promise<number> }> {
  const child = spawn('python3', [path.join(import.meta.dirname, 'fixtures/exchange.py'), a, b], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  exchanger = child;
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') throw new Error(`the exchanger did not start: ${String(first.value)}`);
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const last = await lines.next();
      await new Promise((r) => child.once('exit', r));
      exchanger = undefined;
      return Number(last.value);
    },
  };
}

/** Runs `count` requests made by `make(i)`, `IN_FLIGHT` at a time. */
async function hammer<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await make(i);
      }
    }),
  );
  return out;
}

async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    out.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return out.sort();
}

describe.skipIf(!hasPython)('a folder swapped for a link to the outside during requests', () => {
  for (const depth of ['parent', 'grandparent'] as const) {
    it(`lets no byte out and no file in (the ${depth} of the files is swapped)`, async () => {
      t = await startFilesApp();
      const bob = await t.user('bob');
      const home = path.join(t.root, 'bob');
      // bob/top/d/f.txt inside; outside/d/f.txt holds the secret. The swapped pair is either
      // bob/top/d with a link to outside/d, or bob/top with a link to outside.
      await fs.mkdir(path.join(home, 'top', 'd'), { recursive: true });
      await fs.writeFile(path.join(home, 'top', 'd', 'f.txt'), 'inside');
      await fs.mkdir(path.join(t.outside, 'd'), { recursive: true });
      await fs.writeFile(path.join(t.outside, 'd', 'f.txt'), SECRET);
      await fs.writeFile(path.join(t.outside, 'd', 'outside-only.txt'), SECRET);
      const swapped = depth === 'parent' ? path.join(home, 'top', 'd') : path.join(home, 'top');
      const link = path.join(home, 'link');
      await fs.symlink(depth === 'parent' ? path.join(t.outside, 'd') : t.outside, link);
      const outsideBefore = await listTree(t.outside);
      const pinsBefore = openPinCount();

      const swapping = await startExchanging(swapped, link);
      await fs.writeFile(path.join(home, 'src.txt'), 'copied');
      const results = await hammer(REQUESTS, async (i) => {
        switch (i % 10) {
          case 0:
          case 1:
          case 2:
            return t!.get(bob, '/api/raw/top/d/f.txt');
          case 3:
            return t!.get(bob, '/api/resources/top/d/');
          case 4:
            return t!.req(bob, { method: 'POST', url: `/api/resources/top/d/new-${i}.txt`, payload: 'new' });
          case 5:
            return t!.req(bob, { method: 'POST', url: `/api/resources/top/d/dir-${i}/sub/` });
          case 6:
            return t!.req(bob, { method: 'PUT', url: '/api/resources/top/d/f.txt', payload: 'inside' });
          case 7:
            return t!.req(bob, {
              method: 'PATCH',
              url: `/api/resources/src.txt?action=copy&destination=${encodeURIComponent(`/top/d/copy-${i}.txt`)}`,
            });
          case 8:
            return t!.get(bob, '/api/raw/top/d/?files=f.txt&algo=tar');
          default:
            return t!.get(bob, '/api/search/top?query=only');
        }
      });
      const exchanges = await swapping.stop();

      // The swap really raced the requests (how often depends on the machine, so only that it did).
      expect(exchanges).toBeGreaterThan(0);
      for (const res of results) {
        expect(res.body).not.toContain(SECRET);
        expect(res.body).not.toContain('outside-only');
        expect(res.statusCode, res.body).toBeLessThan(500);
      }
      expect(results.some((r) => r.statusCode === 200 && r.body === 'inside')).toBe(true);
      // Nothing was created, replaced or left behind outside.
      expect(await listTree(t.outside)).toEqual(outsideBefore);
      expect(await fs.readFile(path.join(t.outside, 'd', 'f.txt'), 'utf8')).toBe(SECRET);
      // Every pinned folder was let go.
      expect(openPinCount()).toBe(pinsBefore);
    }, 600_000); // 2,000 requests against a swapping folder: a fixed amount of work, slow on a busy machine
  }
});
