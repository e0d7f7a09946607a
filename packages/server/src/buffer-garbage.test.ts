import { describe, expect, it } from 'vitest';
import { BUFFER_GARBAGE_BUDGET } from './buffer-garbage.js';
import { serverLaunch } from './process-settings.js';
import { runNodeScript } from '../test/node-script.js';

const BODY_PIECES = new URL('./buffer-garbage.ts', import.meta.url).href;
const STARTUP_MEMORY = new URL('./startup-memory.ts', import.meta.url).href;
const MiB = 1024 * 1024;

interface Stream {
  /** Highest memory outside the heap above where it started, in bytes. */
  peakGrowth: number;
  /** Full collections while the body streamed. */
  full: number;
}

/**
 * In a process of its own, with the V8 settings of a listening server (`process-settings.ts`,
 * `main.ts`, `startup-memory.ts`) and 25 MB alive, after one full collection (which sets the old
 * generation's room from what is alive, as any full collection of a running server does):
 * streams 512 MiB of 64 KiB Buffers as a request body arrives, 16 held at a time while they
 * are "written", the event loop turning between batches.
 */
function streamBody(reportPieces: boolean): Stream {
  const script = `
    import v8 from 'node:v8';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { setImmediate as turn } from 'node:timers/promises';
    const { releaseStartupGrowth } = await import(${JSON.stringify(STARTUP_MEMORY)});
    const { shortLivedBuffer } = await import(${JSON.stringify(BODY_PIECES)});
    releaseStartupGrowth();
    const live = Array.from({ length: 150 }, (_, j) =>
      Array.from({ length: 2000 }, (_, i) => ({ i, s: 'x' + i + j })));
    globalThis.gc();
    const external = () => v8.getHeapStatistics().external_memory;
    const start = external();
    let full = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
    }).observe({ entryTypes: ['gc'] });
    let peak = start;
    let batch = [];
    for (let i = 0; i < 8192; i++) {
      const piece = Buffer.allocUnsafe(65536);
      piece[0] = i;
      batch.push(piece);
      if (${reportPieces}) shortLivedBuffer(piece.length);
      peak = Math.max(peak, external());
      if (batch.length === 16) {
        batch = [];
        await turn();
      }
    }
    await turn();
    console.log(JSON.stringify({ peakGrowth: peak - start, full, live: live.length }));
  `;
  return runNodeScript<Stream>(script, [
    // the node flags every launcher starts the server with
    ...serverLaunch({}).nodeArgs,
    '--expose-gc',
    '--no-concurrent-array-buffer-sweeping',
  ]);
}

describe('young collections for request bodies', () => {
  it('keeps the dead pieces of a streamed body within the budget, without full collections', () => {
    const { peakGrowth, full } = streamBody(true);
    // the budget, plus a look's worth of pieces, the batch being held and some slack
    expect(peakGrowth).toBeLessThan(BUFFER_GARBAGE_BUDGET + 4 * MiB);
    expect(full).toBeLessThanOrEqual(1);
  });

  it('is needed: left to V8, the dead pieces pile up well past the budget', () => {
    expect(streamBody(false).peakGrowth).toBeGreaterThan(2 * BUFFER_GARBAGE_BUDGET);
  });
});
