/** The first retry of a failed chunk goes at once; later ones wait 1 s, doubling up to 20 s. */
export const RETRY_BASE_DELAY_MS = 1000;
export const RETRY_MAX_DELAY_MS = 20_000;

/**
 * The delays tus-js-client waits before each retry of a failed request: 0, 1000, 2000, 4000, …
 * capped at 20,000 ms, one entry per allowed retry (`retryCount` from the start-up settings).
 */
export function retryDelays(retryCount: number): number[] {
  const count = Number.isFinite(retryCount) ? Math.max(0, Math.floor(retryCount)) : 0;
  const delays: number[] = [];
  let delay = 0;
  for (let i = 0; i < count; i++) {
    delays.push(delay);
    delay = delay === 0 ? RETRY_BASE_DELAY_MS : Math.min(delay * 2, RETRY_MAX_DELAY_MS);
  }
  return delays;
}
