import type { AppContext } from '../context.js';

const DAY_MS = 86_400_000;
/** Records removed per statement: a long-unpurged log is removed in steps, not one long lock. */
const STEP = 5000;

/** Removes the records older than the retention setting (0 keeps them forever); answers how many. */
export async function purgeExpiredAudit(ctx: AppContext, now: number = Date.now()): Promise<number> {
  const days = ctx.store.settings.get().audit.retentionDays;
  if (days <= 0) return 0;
  const before = now - days * DAY_MS;
  let removed = 0;
  for (;;) {
    const n = await ctx.store.audit.deleteBefore(before, STEP);
    removed += n;
    if (n < STEP) return removed;
    // Requests waiting for the database get their turn between steps.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
