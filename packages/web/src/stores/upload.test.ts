import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  configureUploads,
  selectPercent,
  selectRemainingCount,
  uploadsLimit,
  useUploadStore,
  type NewUploadTask,
  type Transfer,
  type UploadTask,
} from './upload';

/** A transfer the test finishes by hand. */
interface Pending {
  task: UploadTask;
  progress: (bytes: number) => void;
  resolve: () => void;
  reject: (error: unknown) => void;
  aborted: boolean;
}

let pending: Pending[];
let settled: number;
let errors: unknown[];

function fakeTransport(task: UploadTask, progress: (bytes: number) => void): Transfer {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  const entry: Pending = { task, progress, resolve, reject, aborted: false };
  pending.push(entry);
  return {
    done,
    abort: () => {
      entry.aborted = true;
      reject(new DOMException('aborted', 'AbortError'));
    },
  };
}

const task = (name: string, size: number): NewUploadTask => ({
  path: `/dest/${name}`,
  name,
  size,
  isDir: false,
  override: false,
});

/** Lets the promise callbacks of settled transfers run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

function setup(limit: number) {
  pending = [];
  settled = 0;
  errors = [];
  configureUploads({
    transport: fakeTransport,
    limit: () => limit,
    onSettled: () => (settled += 1),
    onError: (error) => errors.push(error),
  });
}

describe('upload queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    useUploadStore.getState().abort();
    configureUploads();
    vi.useRealTimers();
  });

  it('runs at most `limit` transfers at once, in order, and resets when all are done', async () => {
    setup(2);
    const { enqueue } = useUploadStore.getState();
    enqueue([task('a', 10), task('b', 20), task('c', 30), task('d', 40), task('e', 0)]);
    expect(useUploadStore.getState().active).toHaveLength(2);
    expect(pending.map((p) => p.task.name)).toEqual(['a', 'b']);
    expect(selectRemainingCount(useUploadStore.getState())).toBe(5);
    expect(useUploadStore.getState().totalBytes).toBe(100);

    pending[1]!.resolve();
    await settle();
    expect(pending.map((p) => p.task.name)).toEqual(['a', 'b', 'c']);
    expect(useUploadStore.getState().active).toHaveLength(2);

    let maxActive = 0;
    const unsubscribe = useUploadStore.subscribe((state) => {
      maxActive = Math.max(maxActive, state.active.length);
    });
    for (let i = 0; i < pending.length; i++) {
      pending[i]!.resolve();
      await settle();
    }
    unsubscribe();
    expect(maxActive).toBeLessThanOrEqual(2);
    expect(pending.map((p) => p.task.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(settled).toBe(1);
    expect(useUploadStore.getState().tasks).toEqual({});
    expect(useUploadStore.getState().totalBytes).toBe(0);
  });

  it('adds to a running batch and finishes once', async () => {
    setup(1);
    useUploadStore.getState().enqueue([task('a', 5)]);
    useUploadStore.getState().enqueue([task('b', 5)]);
    expect(pending).toHaveLength(1);
    expect(useUploadStore.getState().totalBytes).toBe(10);
    pending[0]!.resolve();
    await settle();
    pending[1]!.resolve();
    await settle();
    expect(settled).toBe(1);
  });

  it('reports a failure and goes on with the rest, counting the failed bytes as done', async () => {
    setup(1);
    useUploadStore.getState().enqueue([task('a', 10), task('b', 10)]);
    pending[0]!.reject(new Error('Upload failed: 403 Forbidden'));
    await settle();
    expect(errors).toEqual([new Error('Upload failed: 403 Forbidden')]);
    expect(useUploadStore.getState().loadedBytes).toBe(10);
    expect(selectPercent(useUploadStore.getState())).toBe(50);
    expect(pending).toHaveLength(2);
    pending[1]!.resolve();
    await settle();
    expect(settled).toBe(1);
  });

  it('throttles progress to one update per 100 ms', async () => {
    setup(1);
    useUploadStore.getState().enqueue([task('a', 1000)]);
    await vi.advanceTimersByTimeAsync(500);
    const progress = pending[0]!.progress;
    progress(100); // leading edge: shown at once
    expect(useUploadStore.getState().loadedBytes).toBe(100);
    await vi.advanceTimersByTimeAsync(30);
    progress(200);
    await vi.advanceTimersByTimeAsync(30);
    progress(300);
    expect(useUploadStore.getState().loadedBytes).toBe(100);
    await vi.advanceTimersByTimeAsync(40);
    expect(useUploadStore.getState().loadedBytes).toBe(300);
    expect(useUploadStore.getState().loaded).toEqual({ [pending[0]!.task.id]: 300 });
  });

  it('samples the speed every second and derives the ETA', async () => {
    setup(1);
    const MB = 1024 * 1024;
    useUploadStore.getState().enqueue([task('a', 10 * MB)]);
    expect(useUploadStore.getState().eta).toBeNull();
    pending[0]!.progress(2 * MB);
    await vi.advanceTimersByTimeAsync(1000);
    expect(useUploadStore.getState().speed).toBeCloseTo(2);
    expect(useUploadStore.getState().eta).toBeCloseTo(4);
  });

  it('aborts every transfer, forgets the queue and reloads', async () => {
    setup(2);
    useUploadStore.getState().enqueue([task('a', 1), task('b', 1), task('c', 1)]);
    useUploadStore.getState().abort();
    await settle();
    expect(pending.map((p) => p.aborted)).toEqual([true, true]);
    expect(pending).toHaveLength(2);
    expect(useUploadStore.getState().queue).toEqual([]);
    expect(useUploadStore.getState().active).toEqual([]);
    expect(settled).toBe(1);
    // Aborted transfers are not failures.
    expect(errors).toEqual([]);
  });

  it('warns before the page is left while uploads run', async () => {
    setup(1);
    const leaving = () => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(leaving()).toBe(false);
    useUploadStore.getState().enqueue([task('a', 1)]);
    expect(leaving()).toBe(true);
    pending[0]!.resolve();
    await settle();
    expect(leaving()).toBe(false);
  });
});

describe('uploadsLimit', () => {
  it('keeps the limit between 1 and 10', () => {
    expect(uploadsLimit(undefined)).toBe(1);
    expect(uploadsLimit(0)).toBe(1);
    expect(uploadsLimit(4)).toBe(4);
    expect(uploadsLimit(50)).toBe(10);
  });
});
