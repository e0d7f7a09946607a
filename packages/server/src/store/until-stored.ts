import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseAway } from '../errors.js';
import { inBackground } from '../background.js';

/** The wait after a write first found the database away, doubled at each failure up to the last. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 30_000;

/**
 * Runs `write` until it is stored, for writes made after the request they belong to was answered
 * or given up, which nothing would make again if one were lost while the database is away
 * (PostgreSQL restarting, its connections cut): a job's end, a quota hold given back, a pending
 * upload's creation record removed. Lost, they would keep a job running for ever, room held, an
 * upload counted. Tried again while the database is away, waiting longer each time; any other
 * failure rejects at once, and so does the last one once `closed` (the store closing) aborts.
 */
export async function untilStored<T>(write: () => Promise<T>, closed: AbortSignal): Promise<T> {
  let wait = FIRST_WAIT_MS;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!isDatabaseAway(err) || closed.aborted) throw err;
      await sleep(wait, undefined, { signal: closed, ref: false }).catch(() => {
        throw err;
      });
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
  }
}

/**
 * Runs `write` now; when the database is away, tries it again in the background (`untilStored`)
 * without keeping the caller waiting (a request's answer, the next give-back in line), telling
 * `failed` if it is never stored. Other failures reject as they are.
 */
export async function storedOrLater(
  store: { untilStored<T>(write: () => Promise<T>): Promise<T> },
  write: () => Promise<unknown>,
  failed: (err: unknown) => void,
): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!isDatabaseAway(err)) throw err;
    inBackground(store.untilStored(write), failed);
  }
}

/**
 * `work`'s answer, or a failure marked as the database's absence once `ms` pass without one: a
 * database that hangs (a frozen server holds its connections open) is as away as a stopped one,
 * for what must answer anyway (`/health`).
 */
export async function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`the database did not answer within ${ms / 1000} s`), {
            databaseAway: true,
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
