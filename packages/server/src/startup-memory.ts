import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * Two V8 habits make a server that has done nothing yet hold memory it only needs under load,
 * and keep it (measured on the built server at rest: 107–114 MB before, 71 MB with both held):
 *
 * - V8 doubles the young generation (up to 2 × 16 MB) whenever much of it survives a
 *   collection, and never gives it back. Loading the program is exactly that (modules, compiled
 *   schemas and routes all survive): 16 MB. The growth factor is read at every collection (the
 *   maximum size only when the process starts, so `--max-semi-space-size` cannot be set from
 *   here), so it is held at 1 while starting.
 * - TurboFan optimises the functions that starting runs most (module loaders, schema
 *   compilers), code that is never hot again, and its compiler's own memory stays mapped:
 *   8 MB. Starting runs in the interpreter and the baseline compiler instead.
 *
 * TurboFan is given back once the server listens, so that it optimises the hot paths of a busy
 * server as before. The young generation may grow again then, but only up to
 * `YOUNG_GENERATION_CAP_MB`, and the old generation is collected sooner than V8 would
 * (`OLD_GENERATION_GROWTH_PERCENT`): both to keep a busy server's peak memory down.
 */
export function holdStartupGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--no-opt');
}

/**
 * How far the old generation may grow past what survived the last full collection, in percent.
 * V8 lets it grow to up to 4 times that on a machine with much memory (the factor depends on the
 * heap limit), so a server whose live heap is 25 MB carried 100 MB of dead listing and PROPFIND
 * text before collecting it. The factor is read at every full collection, so it can be set here.
 * Measured on the bench's rows (listing load, PROPFIND, PUT, thumbnails): the server's peak went
 * from 290–300 MB to 185–195 MB, for a few more full collections (17 instead of 12 over those
 * rows). V8 counts the memory allocated outside the heap since the last full collection against
 * the same room, which is why request bodies are collected young (`body-pieces.ts`).
 */
export const OLD_GENERATION_GROWTH_PERCENT = 50;

/**
 * The young generation (both semi-spaces, as `v8.getHeapSpaceStatistics` counts it) stops
 * growing at this size. Under load V8 doubles it up to 32 MB and keeps it; the garbage a request
 * leaves behind (a listing's items, an upload's socket buffers, which are freed only when a
 * collection finds them dead) then lies there 16 MB at a time. Its maximum is fixed when V8 starts
 * (`--max-semi-space-size`), but the growth factor is read at every collection: it is set to 1
 * once this size is reached.
 */
export const YOUNG_GENERATION_CAP_MB = 8;

function capYoungGeneration(): void {
  const cap = YOUNG_GENERATION_CAP_MB * 1024 * 1024;
  let held: boolean | undefined;
  const check = () => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    const hold = (young?.space_size ?? 0) >= cap;
    if (hold === held) return;
    held = hold;
    setFlagsFromString(`--semi-space-growth-factor=${hold ? 1 : 2}`);
  };
  check();
  new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
}

export function releaseStartupGrowth(): void {
  setFlagsFromString('--opt');
  setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
  capYoungGeneration();
}
