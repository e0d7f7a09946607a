import type { FastifyInstance } from 'fastify';
import { inBackground } from '../background.js';
import type { AppContext } from '../context.js';

export interface PeriodicTask {
  /** Names the task across the instances on the database. */
  name: string;
  everyMs: number;
  /** The log message of a failed run. */
  failure: string;
  /** The first run, when the server is ready, is awaited before it serves (the default) or not. */
  awaitFirst?: boolean;
}

/**
 * Work every instance does on a timer (sweeps, purges, recounts): once when the server is ready,
 * then every `everyMs`, and never twice at once across the instances on one database
 * (`store.exclusively`): an instance that finds the task running elsewhere skips its turn.
 */
export function periodically(
  app: FastifyInstance,
  ctx: AppContext,
  task: PeriodicTask,
  work: () => Promise<unknown>,
): void {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // A run cut short by the server closing (its database gone) is not a failure worth a warning.
  const failed = (err: unknown) => {
    if (!closed) ctx.log.warn({ err }, task.failure);
  };
  const run = () => ctx.store.exclusively(task.name, work);
  app.addHook('onReady', async () => {
    if (task.awaitFirst ?? true) await run().catch(failed);
    else inBackground(run(), failed);
    timer = setInterval(() => inBackground(run(), failed), task.everyMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    closed = true;
    clearInterval(timer);
  });
}
