import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHUNK_SIZE_SETTLE_MS, useChunkSizeField } from './use-chunk-size-field';

function Field({ onBytes }: { onBytes: (bytes: number) => void }) {
  const { text, setText } = useChunkSizeField(10 * 1024 * 1024, onBytes);
  return <input aria-label="Chunk size" value={text} onChange={(event) => setText(event.target.value)} />;
}

describe('useChunkSizeField', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('shows the size in human units and applies typing 1.5 s after it stops', () => {
    const onBytes = vi.fn();
    render(<Field onBytes={onBytes} />);
    const input = screen.getByLabelText<HTMLInputElement>('Chunk size');
    expect(input.value).toBe('10MB');
    act(() => vi.advanceTimersByTime(CHUNK_SIZE_SETTLE_MS));
    onBytes.mockClear();

    fireEvent.change(input, { target: { value: '2' } });
    act(() => vi.advanceTimersByTime(1000));
    fireEvent.change(input, { target: { value: '2.5 g' } });
    act(() => vi.advanceTimersByTime(CHUNK_SIZE_SETTLE_MS - 1));
    expect(onBytes).not.toHaveBeenCalled();
    act(() => vi.advanceTimersByTime(1));
    expect(onBytes).toHaveBeenCalledWith(2.5 * 1024 ** 3);
    expect(input.value).toBe('2.5GB');
  });

  it('turns an unreadable size into 1 MiB', () => {
    const onBytes = vi.fn();
    render(<Field onBytes={onBytes} />);
    const input = screen.getByLabelText<HTMLInputElement>('Chunk size');
    fireEvent.change(input, { target: { value: 'lots' } });
    act(() => vi.advanceTimersByTime(CHUNK_SIZE_SETTLE_MS));
    expect(onBytes).toHaveBeenLastCalledWith(1024 * 1024);
    expect(input.value).toBe('1MB');
  });
});
