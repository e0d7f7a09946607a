import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  clampShellHeight,
  heightAtPointer,
  SHELL_DEFAULT_HEIGHT_EM,
  SHELL_DRAG_THROTTLE_MS,
  shellHeightLimits,
  throttle,
} from './shell-height';

// 800 px window, 16 px em, 8 px divider: limits 2.25 + 0.5 = 2.75em and 50 - 4 = 46em.
const metrics = { windowHeight: 800, fontSize: 16, dividerHeight: 8 };

describe('shell height', () => {
  it('starts at 25em, within 2.25em plus the divider and the window height minus 4em', () => {
    expect(SHELL_DEFAULT_HEIGHT_EM).toBe(25);
    expect(SHELL_DRAG_THROTTLE_MS).toBe(32);
    expect(shellHeightLimits(metrics)).toEqual({ min: 2.75, max: 46 });
    expect(clampShellHeight(25, metrics)).toBe(25);
    expect(clampShellHeight(1, metrics)).toBe(2.75);
    expect(clampShellHeight(60, metrics)).toBe(46);
    expect(clampShellHeight(Number.NaN, metrics)).toBe(2.75);
  });

  it('keeps the smallest panel in a window too short for both limits', () => {
    expect(shellHeightLimits({ ...metrics, windowHeight: 80 })).toEqual({ min: 2.75, max: 2.75 });
  });

  it('follows the pointer: the divider sits where the pointer is, within the limits', () => {
    expect(heightAtPointer(400, metrics)).toBe(25);
    expect(heightAtPointer(799, metrics)).toBe(2.75);
    expect(heightAtPointer(0, metrics)).toBe(46);
    expect(heightAtPointer(401, metrics)).toBe(24.94);
  });
});

describe('throttle', () => {
  afterEach(() => vi.useRealTimers());

  it('runs the first call at once and folds the rest of the interval into one trailing call', () => {
    vi.useFakeTimers();
    const calls: number[] = [];
    const fn = throttle((y: number) => calls.push(y), 32);
    fn(1);
    fn(2);
    fn(3);
    expect(calls).toEqual([1]);
    vi.advanceTimersByTime(31);
    expect(calls).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual([1, 3]);
    vi.advanceTimersByTime(100);
    fn(4);
    expect(calls).toEqual([1, 3, 4]);
  });

  it('drops a pending call on cancel', () => {
    vi.useFakeTimers();
    const calls: number[] = [];
    const fn = throttle((y: number) => calls.push(y), 32);
    fn(1);
    fn(2);
    fn.cancel();
    vi.advanceTimersByTime(100);
    expect(calls).toEqual([1]);
  });
});
