import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import { MAX_TOASTS, SUCCESS_TOAST_MS, useToastStore } from './toasts';

describe('toasts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => vi.useRealTimers());

  it('keeps at most 10, dropping the oldest', () => {
    const { showError } = useToastStore.getState();
    for (let i = 1; i <= 12; i++) showError(`error ${i}`);
    const messages = useToastStore.getState().toasts.map((toast) => toast.message);
    expect(MAX_TOASTS).toBe(10);
    expect(messages).toHaveLength(10);
    expect(messages[0]).toBe('error 3');
    expect(messages[9]).toBe('error 12');
  });

  it('removes a success toast after 4 seconds', () => {
    useToastStore.getState().showSuccess('Saved');
    expect(useToastStore.getState().toasts).toHaveLength(1);
    vi.advanceTimersByTime(SUCCESS_TOAST_MS - 1);
    expect(useToastStore.getState().toasts).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(useToastStore.getState().toasts).toHaveLength(0);
  });

  it('keeps errors until dismissed', () => {
    useToastStore.getState().showError(new ApiError(500, '500 Internal Server Error'));
    vi.advanceTimersByTime(60_000);
    const [toast] = useToastStore.getState().toasts;
    expect(toast).toMatchObject({ kind: 'error', message: '500 Internal Server Error' });
    useToastStore.getState().dismiss(toast!.id);
    expect(useToastStore.getState().toasts).toHaveLength(0);
  });
});
