import type { LockLine } from './lock-line.js';

/** Runs `work` in the turn of `name` (see `inTurn`). */
export type Turns = <T>(name: string, work: () => Promise<T>) => Promise<T>;

/**
 * Sections that run one call at a time: in this process by one queue, and across the instances
 * on one database by the lock line's lock of the section's name (on SQLite that lock is granted
 * at once, and the queue alone keeps the calls apart). For a check and the write it allows, which
 * must not interleave with another's (a limit counted, then a row added). Short sections only
 * (see `LockLine.hold`).
 */
export function inTurn(lockLine: LockLine): Turns {
  let tail: Promise<unknown> = Promise.resolve();
  return (name, work) => {
    const alone = async () => {
      const lock = await lockLine.hold(name);
      try {
        return await work();
      } finally {
        await lock.release();
      }
    };
    const run = tail.then(alone, alone);
    tail = run.catch(() => undefined);
    return run;
  };
}
