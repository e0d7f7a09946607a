import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jsonLines } from './stream.js';

/** A producer the test releases item by item, recording whether it was stopped. */
function gated<T>() {
  const gates: ((v: T | undefined) => void)[] = [];
  const state = { pulled: 0, finished: false };
  async function* items(): AsyncGenerator<T> {
    try {
      for (;;) {
        state.pulled++;
        const value = await new Promise<T | undefined>((resolve) => gates.push(resolve));
        if (value === undefined) return;
        yield value;
      }
    } finally {
      state.finished = true;
    }
  }
  const release = (v: T | undefined) => gates.shift()!(v);
  return { items: items(), release, state };
}

function collect(stream: Readable) {
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  const ended = new Promise<void>((resolve) => stream.on('end', () => resolve()));
  return { text: () => chunks.join(''), ended };
}

describe('jsonLines', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the first hit at once and an empty line after each 5 s of silence', async () => {
    const p = gated<{ dir: boolean; path: string }>();
    const abort = new AbortController();
    const out = collect(jsonLines(p.items, { keepAliveMs: 5000, signal: abort.signal, onError: () => {} }));
    await vi.advanceTimersByTimeAsync(4000);
    expect(out.text()).toBe('');
    await vi.advanceTimersByTimeAsync(1000);
    expect(out.text()).toBe('\n');
    p.release({ dir: false, path: 'a.txt' });
    await vi.advanceTimersByTimeAsync(0);
    expect(out.text()).toBe('\n{"dir":false,"path":"a.txt"}\n');
    await vi.advanceTimersByTimeAsync(5000);
    expect(out.text()).toBe('\n{"dir":false,"path":"a.txt"}\n\n');
    p.release(undefined);
    await out.ended;
    // Nothing more once it ended.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(out.text()).toBe('\n{"dir":false,"path":"a.txt"}\n\n');
  });

  it('batches later hits and flushes what is left at the end', async () => {
    const p = gated<number>();
    const out = collect(
      jsonLines(p.items, { keepAliveMs: 5000, signal: new AbortController().signal, onError: () => {} }),
    );
    p.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(out.text()).toBe('1\n');
    p.release(2);
    await vi.advanceTimersByTimeAsync(0);
    p.release(3);
    await vi.advanceTimersByTimeAsync(0);
    expect(out.text()).toBe('1\n');
    p.release(undefined);
    await out.ended;
    expect(out.text()).toBe('1\n2\n3\n');
  });

  it('stops the producer and its timer when the client goes away', async () => {
    const p = gated<number>();
    const abort = new AbortController();
    const stream = jsonLines(p.items, { keepAliveMs: 5000, signal: abort.signal, onError: () => {} });
    const out = collect(stream);
    p.release(1);
    await vi.advanceTimersByTimeAsync(0);
    abort.abort();
    p.release(2);
    await out.ended;
    expect(p.state.finished).toBe(true);
    expect(p.state.pulled).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    expect(out.text()).toBe('1\n');
  });

  it('appends the 500 line when the producer fails after the answer started', async () => {
    async function* failing() {
      yield 1;
      throw new Error('disk on fire');
    }
    const errors: unknown[] = [];
    const out = collect(
      jsonLines(failing(), {
        keepAliveMs: 5000,
        signal: new AbortController().signal,
        onError: (e) => errors.push(e),
      }),
    );
    await out.ended;
    expect(out.text()).toBe('1\n500 Internal Server Error\n');
    expect(errors).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
