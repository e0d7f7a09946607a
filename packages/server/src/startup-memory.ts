import { setFlagsFromString } from 'node:v8';

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
 * server as before. The young generation may grow again then, up to the cap the launchers give
 * node on its command line (`SEMI_SPACE_MB` in `process-settings.ts`: only the command line can
 * set the maximum), and the old generation is collected sooner than V8 would
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
 * the same room, which is why request bodies are collected young (`buffer-garbage.ts`).
 */
export const OLD_GENERATION_GROWTH_PERCENT = 50;

export function releaseStartupGrowth(): void {
  setFlagsFromString('--opt');
  setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
  // V8's own factor: the semi-spaces double when much survives, up to `--max-semi-space-size`.
  setFlagsFromString('--semi-space-growth-factor=2');
}
