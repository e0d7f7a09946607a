import { beforeAll, describe, expect, it } from 'vitest';
import { PIECE_CHARS } from '../src/http/dav/props.js';
import { runNodeScript } from './node-script.js';

const HELPERS = new URL('./files-helpers.ts', import.meta.url).href;
const STARTUP_MEMORY = new URL('../src/startup-memory.ts', import.meta.url).href;
const MB = 1024 * 1024;

interface Run {
  /** Old-space bytes gained over each measured PROPFIND that ran without a full collection. */
  gains: number[];
  /** Measured PROPFINDs (of 8) during which a full collection ran (their gain says nothing). */
  disturbed: number;
  /** Bytes of one answer. */
  bytes: number;
  /** Bytes of an answer waiting for a reader that took nothing for 100 turns of the event loop. */
  held: number;
}

/**
 * In a process of its own, with the V8 settings of a listening server (`main.ts`,
 * `startup-memory.ts`): the real app, a folder of `files` entries, and PROPFINDs (Depth 1,
 * allprop) of it, each answer read as a stream. Before each measured request a full collection
 * leaves only what is alive in the old generation; what is there more once the answer has been
 * read is what the request promoted while it ran (objects that outlived two young collections).
 * Then one more answer is left unread for 100 turns of the event loop: what waits for the reader
 * then is what back-pressure let the server make ahead of it.
 */
function propfinds(files: number): Run {
  const script = `
    import fs from 'node:fs/promises';
    import path from 'node:path';
    import v8 from 'node:v8';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { setImmediate as turn } from 'node:timers/promises';
    const { holdStartupGrowth, releaseStartupGrowth } = await import(${JSON.stringify(STARTUP_MEMORY)});
    holdStartupGrowth();
    const { startFilesApp, PASSWORD } = await import(${JSON.stringify(HELPERS)});
    const t = await startFilesApp();
    try {
      await t.user('ann', { scope: '/ann' });
      const dir = path.join(t.root, 'ann', 'big');
      await fs.mkdir(dir);
      const words = ['alpha', 'report', 'photo', 'backup', 'invoice', 'draft'];
      const exts = ['txt', 'md', 'jpg', 'pdf', 'mp4', ''];
      for (let i = 0; i < ${files}; i++) {
        const ext = exts[i % exts.length];
        await fs.writeFile(path.join(dir, words[i % words.length] + '-' + String(i).padStart(6, '0') + (ext ? '.' + ext : '')), 'x'.repeat(i % 97));
      }
      releaseStartupGrowth();
      let majors = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
      }).observe({ entryTypes: ['gc'] });
      const oldUsed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
      const headers = {
        host: 'dav.test',
        depth: '1',
        authorization: 'Basic ' + Buffer.from('ann:' + PASSWORD).toString('base64'),
      };
      const propfind = async (idleTurns = 0) => {
        const res = await t.app.inject({ method: 'PROPFIND', url: '/dav/big/', headers, payloadAsStream: true });
        if (res.statusCode !== 207) throw new Error('PROPFIND answered ' + res.statusCode);
        const stream = res.stream();
        for (let k = 0; k < idleTurns; k++) await turn();
        const held = stream.readableLength;
        let bytes = 0;
        for await (const piece of stream) bytes += piece.length;
        return { bytes, held };
      };
      // code compiled, caches filled, the password checked once
      await propfind();
      await propfind();
      const gains = [];
      let disturbed = 0;
      let bytes = 0;
      for (let k = 0; k < 8; k++) {
        const collected = majors + 1;
        globalThis.gc();
        while (majors < collected) await turn();
        const before = oldUsed();
        const seen = majors;
        bytes = (await propfind()).bytes;
        await turn();
        if (majors === seen) gains.push(oldUsed() - before);
        else disturbed++;
      }
      const { held } = await propfind(100);
      console.log(JSON.stringify({ gains, disturbed, bytes, held }));
    } finally {
      await t.close();
    }
  `;
  // Folders read by the reader threads, not the native addon: through the addon a 10,000-entry
  // listing alone promotes 1.8–2.2 MB (0.7 through the threads), which is the listing's to cut,
  // not PROPFIND's; this measures what PROPFIND adds to a listing.
  return runNodeScript<Run>(script, ['--expose-gc'], {
    maxBuffer: 16 * MB,
    env: { ...process.env, FB_NATIVE: 'off' },
  });
}

describe('PROPFIND of a large folder', () => {
  let run: Run;
  // a child process making 10,000 files and 9 answers of 7 MB: slow on a busy machine
  beforeAll(() => {
    run = propfinds(10_000);
    if (process.env.PROPFIND_MEMORY_LOG) console.log(run);
  }, 300_000);

  it('promotes little to the old generation: the rows die young, the answer is made piece by piece', () => {
    const { gains, disturbed, bytes } = run;
    expect(bytes).toBeGreaterThan(6 * MB);
    // a full collection during a request is possible, but not during most of them
    expect(gains.length, `${disturbed} of 8 disturbed`).toBeGreaterThanOrEqual(4);
    // What a request must promote is its members' names (0.5–0.7 MB measured); whether the
    // listing's rows are promoted too (about 2 MB more) depends on where the young collections
    // fall, on every build, so the least of the requests is compared. Measured: 0.5–1.6 MB; 2.6
    // MB and more on the build that made an object with its href for every entry, held until the
    // answer was done (4.9–5.0 MB at first, 2.8–4.6 MB later).
    expect(Math.min(...gains)).toBeLessThan(2.2 * MB);
  });

  it('makes no more of the answer than the reader takes, give or take a piece', () => {
    // at most 3 bytes of UTF-8 per UTF-16 unit, one piece in the stream and one in the reader's buffer
    expect(run.held).toBeGreaterThan(0);
    expect(run.held).toBeLessThanOrEqual(2 * 3 * PIECE_CHARS);
    expect(run.held).toBeLessThan(run.bytes / 10);
  });
});
