import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage } from '../support/browser';
import { ADMIN, startServer, type RunningServer } from '../support/server';

/**
 * Resident memory of the browser processes this test process started (Linux /proc), by kind:
 * the renderer runs the page; the rest are the browser, GPU, network and utility processes.
 */
async function browserMemory(): Promise<{ renderer: number; all: number }> {
  const parents = new Map<number, number>();
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // The command name in parentheses may hold spaces: the parent pid is the second field after it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(name), ppid);
  }
  const mine = (pid: number): boolean => {
    for (let p = parents.get(pid); p; p = parents.get(p)) if (p === process.pid) return true;
    return false;
  };
  let renderer = 0;
  let all = 0;
  for (const pid of parents.keys()) {
    if (!mine(pid)) continue;
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    all += rss;
    if (cmdline.includes('--type=renderer')) renderer += rss;
  }
  return { renderer, all };
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SIZE = 2 * GiB;
/** Marked bytes at the start, the middle and the end, to tell that every part arrived in place. */
const MARKS = [
  { at: 0, text: 'first bytes' },
  { at: GiB + 12345, text: 'middle bytes' },
  { at: SIZE - 10, text: 'last bytes' },
];

/**
 * A 2 GiB file goes through the browser's upload prompt and the resumable upload (tus) to the
 * server, while the page's memory is sampled. The file is sparse on the local disk, so it costs
 * no space there; the server writes all of it.
 *
 * What this proves: the client slices the File and hands the slices to XHR; it never reads the
 * file, or chunk after chunk of it, into the page. Two measures are taken:
 * - the JS heap (DevTools `Performance.getMetrics` JSHeapUsedSize): objects the page's code keeps;
 * - the resident memory of the page's renderer process (from /proc, Linux only): ArrayBuffers —
 *   what `arrayBuffer()` or a FileReader gives — live outside the JS heap, so only this one shows
 *   file data read into the page. (Checked: a client that keeps every chunk it reads leaves the JS
 *   heap at ~6 MiB but grows the renderer by ~2 GiB, and this test fails.)
 * It also proves that an upload of more than 2^31 bytes arrives complete and in order. The chunk
 * size is the product's default (10 MiB), so this runs ~205 PATCH requests.
 */
describe('uploading a 2 GiB file', () => {
  let server: RunningServer;
  let browser: Browser;
  let local: string;

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
    local = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-big-'));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await fs.rm(local, { recursive: true, force: true });
  });

  it(
    'keeps the tab memory far below the file size, and the server gets every byte',
    { timeout: 300_000 },
    async () => {
      const source = path.join(local, 'huge.bin');
      const handle = await fs.open(source, 'w');
      await handle.truncate(SIZE);
      for (const mark of MARKS) await handle.write(Buffer.from(mark.text), 0, mark.text.length, mark.at);
      await handle.close();

      const { context, page } = await newPage(browser);
      await login(page, server.url, ADMIN.username, ADMIN.password);
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      const heapUsed = async () => {
        const { metrics } = await cdp.send('Performance.getMetrics');
        return metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? Number.NaN;
      };
      const before = await heapUsed();
      const memoryBefore = await browserMemory();
      let peakMemory = memoryBefore;

      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      const chooser = page.waitForEvent('filechooser');
      await page
        .getByRole('dialog', { name: 'Upload' })
        .getByRole('button', { name: 'File', exact: true })
        .click();
      // A path (not a buffer): the browser opens the file from disk like one a person picked.
      await (await chooser).setFiles(source);

      const target = path.join(server.root, 'huge.bin');
      let peak = before;
      let samples = 0;
      const until = Date.now() + 280_000;
      for (;;) {
        peak = Math.max(peak, await heapUsed());
        const memory = await browserMemory();
        peakMemory = {
          renderer: Math.max(peakMemory.renderer, memory.renderer),
          all: Math.max(peakMemory.all, memory.all),
        };
        samples += 1;
        const done = await fs.stat(target).then(
          (stat) => stat.size === SIZE,
          () => false,
        );
        if (done && (await page.locator('.upload-panel').count()) === 0) break;
        if (Date.now() > until) throw new Error('the upload did not finish in time');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      peak = Math.max(peak, await heapUsed());

      const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
      console.log(
        `2 GiB upload over ${samples} samples: JS heap ${mib(before)} before, peak ${mib(peak)}; ` +
          `renderer RSS ${mib(memoryBefore.renderer)} before, peak ${mib(peakMemory.renderer)}; ` +
          `all browser processes ${mib(memoryBefore.all)} before, peak ${mib(peakMemory.all)}`,
      );
      expect(samples).toBeGreaterThan(3);
      expect(peak).toBeLessThan(200 * MiB);
      // Growth far below even one chunk held twice, let alone the file.
      expect(peak - before).toBeLessThan(64 * MiB);
      // ArrayBuffers live outside the JS heap: the renderer's resident memory would show a file
      // or its chunks read into the page.
      expect(memoryBefore.renderer).toBeGreaterThan(0);
      expect(peakMemory.renderer - memoryBefore.renderer).toBeLessThan(256 * MiB);

      const written = await fs.open(target, 'r');
      try {
        expect((await written.stat()).size).toBe(SIZE);
        for (const mark of MARKS) {
          const buffer = Buffer.alloc(mark.text.length);
          await written.read(buffer, 0, buffer.length, mark.at);
          expect(buffer.toString()).toBe(mark.text);
        }
      } finally {
        await written.close();
      }
      await context.close();
    },
  );
});
