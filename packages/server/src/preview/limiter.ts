/**
 * Runs at most `size` tasks at once; the rest wait their turn in order. `onIdle` is called each
 * time the last task running ends with none waiting: the end of a burst.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly onIdle?: () => void,
  ) {}

  /** Tasks waiting for a free slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Tasks running now. */
  get running(): number {
    return this.active;
  }

  /**
   * Runs `task` when a slot is free. A task whose `signal` aborts before its turn leaves the queue
   * and rejects with the signal's reason: nobody waits for it any more, and the tasks behind it
   * should not wait for it either.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.active >= this.size) await this.turn(signal);
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      const next = this.waiting.shift();
      if (next) next();
      else if (this.active === 0) this.onIdle?.();
    }
  }

  private turn(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      const go = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      this.waiting.push(go);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}
