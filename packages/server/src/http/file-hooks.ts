import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.js';
import { runHooks, type HookEvent, type HookTarget } from '../runner/hooks.js';
import type { StoredUser } from '../store/users.js';

/**
 * Response header naming after-hooks that failed (URL-encoded text). The operation itself
 * succeeded, so the status stays 2xx; clients that care can show the warning.
 */
export const HOOK_WARNING_HEADER = 'X-Hook-Warning';

/** Where after-hook warnings go: a reply's header, or whoever follows work without a reply (a job). */
export type HookWarnings = FastifyReply | ((warning: string) => void);

/** Runs the `after_` hooks of an operation that happened: failures become a warning header. */
export async function runAfterHooks(
  ctx: AppContext,
  user: StoredUser,
  reply: HookWarnings,
  event: HookEvent,
  target: HookTarget,
): Promise<void> {
  let warnings: string[];
  try {
    warnings = (await runHooks(ctx, user, event, 'after', target)).warnings;
  } catch (err) {
    ctx.log.warn({ err, event }, 'after-hooks could not run');
    warnings = [`the after_${event} hooks could not run`];
  }
  if (!warnings.length) return;
  if (typeof reply === 'function') reply(warnings.join('; '));
  else void reply.header(HOOK_WARNING_HEADER, encodeURIComponent(warnings.join('; ')));
}

/**
 * An operation between its hooks: a failing blocking `before_` hook throws before anything is
 * changed; `after_` hooks run once the operation is done and can no longer fail it.
 */
export async function withHooks<T>(
  ctx: AppContext,
  user: StoredUser,
  reply: HookWarnings,
  event: HookEvent,
  target: HookTarget,
  operation: () => Promise<T>,
  afterTarget: (result: T) => HookTarget = () => target,
): Promise<T> {
  await runHooks(ctx, user, event, 'before', target);
  const result = await operation();
  await runAfterHooks(ctx, user, reply, event, afterTarget(result));
  return result;
}
