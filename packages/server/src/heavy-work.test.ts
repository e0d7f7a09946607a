import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import { FairScheduler, loopTurn } from './heavy-work.js';

/** A task that runs until it is let go; `started` resolves once it runs. */
function held(scheduler: FairScheduler, owner: string, log: string[], name: string, signal?: AbortSignal) {
  let release!: () => void;
  const done = scheduler.run(
    owner,
    () =>
      new Promise<string>((resolve) => {
        log.push(name);
        release = () => resolve(name);
      }),
    signal,
  );
  return { done, release: () => release() };
}

/** Lets every settled promise's continuation run (a turn of the event loop, no clock). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairScheduler', () => {
  it('runs at most perOwner tasks of one owner; the rest wait in order, failures included', async () => {
    const s = new FairScheduler({ slots: Infinity, perOwner: 2, queuePerOwner: 10 });
    const log: string[] = [];
    const tasks = ['a1', 'a2', 'a3', 'a4'].map((n) => held(s, 'a', log, n));
    await settle();
    expect(log).toEqual(['a1', 'a2']);
    expect([s.runningCount('a'), s.waitingCount('a')]).toEqual([2, 2]);
    tasks[0]!.release();
    await settle();
    expect(log).toEqual(['a1', 'a2', 'a3']);
    const failing = s.run('a', async () => {
      throw new Error('it failed');
    });
    tasks[1]!.release();
    tasks[2]!.release();
    await expect(failing).rejects.toThrow('it failed');
    tasks[3]!.release();
    expect(await Promise.all(tasks.map((t) => t.done))).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect([s.runningCount(), s.waitingCount()]).toEqual([0, 0]);
  });

  it('admits another owner’s task while the first owner’s tasks are queued', async () => {
    const s = new FairScheduler({ slots: Infinity, perOwner: 1, queuePerOwner: 10 });
    const log: string[] = [];
    const first = [1, 2, 3].map((i) => held(s, 'heavy user', log, `h${i}`));
    const other = held(s, 'other user', log, 'o1');
    await settle();
    expect(log).toEqual(['h1', 'o1']);
    expect(s.waitingCount('heavy user')).toBe(2);
    other.release();
    expect(await other.done).toBe('o1');
    for (const t of first) {
      t.release();
      await settle();
    }
    expect(log).toEqual(['h1', 'o1', 'h2', 'h3']);
  });

  it('gives free slots to the owners in turn, not to the oldest task', async () => {
    const s = new FairScheduler({ slots: 1, perOwner: 1, queuePerOwner: 10 });
    const log: string[] = [];
    // Owner a asks four times, then b and c: each task is named after its owner.
    const names = ['a0', 'a1', 'a2', 'a3', 'b1', 'c1', 'b2'];
    const tasks = new Map(names.map((n) => [n, held(s, n[0]!, log, n)]));
    await settle();
    // Each task, once it runs, is let go; the next one takes the slot.
    while (log.length < names.length) {
      tasks.get(log.at(-1)!)!.release();
      await settle();
    }
    tasks.get(log.at(-1)!)!.release();
    await Promise.all([...tasks.values()].map((t) => t.done));
    // a's long queue does not go first: b and c take their turns between a's tasks.
    expect(log).toEqual(['a0', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('refuses past an owner’s queue with 429 and Retry-After; other owners are not refused', async () => {
    const s = new FairScheduler({
      slots: Infinity,
      perOwner: 1,
      queuePerOwner: 2,
      refusal: { message: 'too many at once', retryAfterSeconds: 3 },
    });
    const log: string[] = [];
    const tasks = ['a1', 'a2', 'a3'].map((n) => held(s, 'a', log, n));
    await settle();
    const refused = await s.admit('a').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).status).toBe(429);
    expect((refused as AppError).message).toBe('too many at once');
    expect((refused as AppError).headers).toEqual({ 'Retry-After': '3' });
    expect(s.waitingCount('a')).toBe(2);
    const b = held(s, 'b', log, 'b1');
    await settle();
    expect(log).toEqual(['a1', 'b1']);
    b.release();
    for (const t of tasks) {
      t.release();
      await settle();
    }
    await Promise.all(tasks.map((t) => t.done));
  });

  it('drops a waiting task whose signal aborts, and the tasks behind it move up', async () => {
    const s = new FairScheduler({ slots: 1, perOwner: 1, queuePerOwner: 10 });
    const log: string[] = [];
    const first = held(s, 'a', log, 'first');
    const gone = new AbortController();
    const dropped = held(s, 'a', log, 'dropped', gone.signal);
    const kept = held(s, 'b', log, 'kept');
    await settle();
    expect(s.waitingCount()).toBe(2);
    gone.abort(new Error('the client went away'));
    await expect(dropped.done).rejects.toThrow('the client went away');
    expect(s.waitingCount()).toBe(1);
    first.release();
    await settle();
    kept.release();
    expect(await kept.done).toBe('kept');
    expect(log).toEqual(['first', 'kept']);
    expect(s.runningCount()).toBe(0);
  });

  it('refuses a task whose signal aborted before it asked', async () => {
    const s = new FairScheduler({ slots: 1, perOwner: 1, queuePerOwner: 1 });
    await expect(s.run('a', async () => 'ran', AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(s.runningCount()).toBe(0);
  });

  it('says when the last task of a burst ends, and only then', async () => {
    const s = new FairScheduler({ slots: 2, perOwner: 2, queuePerOwner: 10 });
    let idle = 0;
    s.on('idle', () => idle++);
    const log: string[] = [];
    const tasks = ['1', '2', '3', '4'].map((n) => held(s, 'a', log, n));
    await settle();
    for (const name of ['1', '2', '3', '4']) {
      expect(idle).toBe(0);
      tasks[Number(name) - 1]!.release();
      await settle();
    }
    await Promise.all(tasks.map((t) => t.done));
    expect(idle).toBe(1);
  });
});

describe('loopTurn', () => {
  it('lets one piece of heavy work go per turn of the event loop, however many wait', async () => {
    const seen: string[] = [];
    let turning = true;
    // A marker once per turn of the loop, as a small request's I/O would get its turn.
    const ticks = () => {
      if (!turning) return;
      seen.push('turn');
      setImmediate(ticks);
    };
    setImmediate(ticks);
    const heavy = async (name: string) => {
      for (let i = 1; i <= 3; i++) {
        await loopTurn();
        seen.push(`${name}${i}`);
      }
    };
    await Promise.all([heavy('a'), heavy('b'), heavy('c')]);
    turning = false;
    const pieces = seen.map((s, i) => ({ s, i })).filter(({ s }) => s !== 'turn');
    expect(pieces.map(({ s }) => s)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3', 'b3', 'c3']);
    // Between any two pieces the loop went round at least once.
    for (let k = 1; k < pieces.length; k++) {
      expect(seen.slice(pieces[k - 1]!.i + 1, pieces[k]!.i)).toContain('turn');
    }
  });
});
