import type { LockLine } from './lock-line.js';

/**
 * A section that runs one call at a time: in this process by a queue, and across the instances
 * on one database by the lock line's lock `name` (on SQLite that lock is granted at once, and the
 * queue alone keeps the calls apart). For a check and the write it allows, which must not
 * interleave with another's. Short sections only (see `LockLine.hold`).
 */
export function inTurn(lockLine: LockLine, name: string): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
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
