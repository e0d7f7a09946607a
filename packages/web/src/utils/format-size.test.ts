import { describe, expect, it } from 'vitest';
import { formatSize } from './format-size';

describe('formatSize', () => {
  it('shows bytes below 1 KiB as they are', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1)).toBe('1 B');
    expect(formatSize(1023)).toBe('1,023 B');
  });

  it('uses base 1024', () => {
    expect(formatSize(1024)).toBe('1 KiB');
    expect(formatSize(1024 ** 2)).toBe('1 MiB');
    expect(formatSize(1024 ** 3)).toBe('1 GiB');
    expect(formatSize(5 * 1024 ** 4)).toBe('5 TiB');
  });

  it('rounds to two decimals', () => {
    expect(formatSize(1536)).toBe('1.5 KiB');
    expect(formatSize(1234567)).toBe('1.18 MiB');
    expect(formatSize(1024 ** 2 - 1)).toBe('1 MiB');
  });

  it('follows the language for the decimal separator', () => {
    expect(formatSize(1536, 'de')).toBe('1,5 KiB');
  });

  it('treats nonsense as zero', () => {
    expect(formatSize(-5)).toBe('0 B');
    expect(formatSize(Number.NaN)).toBe('0 B');
  });
});
