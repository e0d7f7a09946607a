/**
 * Starts nothing itself: takes work already started that nobody will wait for (a sweep on a
 * timer, a job that runs after its answer, a hook that does not block) and gives its failure to
 * `failed` at once. A rejected promise nobody handles is an unhandled rejection, which ends a
 * Node process; the lint rule `no-floating-promises` (with `void` no way out) makes every other
 * promise be awaited or handled where it is made (docs/ARCHITECTURE.md, "Promises").
 */
export function inBackground(work: Promise<unknown>, failed: (err: unknown) => void): void {
  work.then(undefined, (err: unknown) => {
    try {
      failed(err);
    } catch {
      // Reporting the failure failed (a log stream gone): it must not become a rejection itself.
    }
  });
}
