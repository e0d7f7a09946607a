import type { AppContext } from '../context.js';

/** Runs change listeners without letting them decide the answer. */
export async function notify(ctx: AppContext, what: string, fn: () => Promise<void> | void): Promise<void> {
  try {
    await fn();
  } catch (err) {
    ctx.log.warn({ err }, `after ${what}: listener failed`);
  }
}
