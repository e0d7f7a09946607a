import { describe, expect, it } from 'vitest';
import { FALLBACK_CHUNK_SIZE, formatChunkSize, parseChunkSize } from './tus-chunk-size';

describe('parseChunkSize', () => {
  it('reads plain byte counts', () => {
    expect(parseChunkSize('512')).toBe(512);
    expect(parseChunkSize('0')).toBe(0);
  });

  it('reads every unit, in any case, with or without a space', () => {
    expect(parseChunkSize('1B')).toBe(1);
    expect(parseChunkSize('2K')).toBe(2048);
    expect(parseChunkSize('2kb')).toBe(2048);
    expect(parseChunkSize('10M')).toBe(10 * 1024 ** 2);
    expect(parseChunkSize('10 MB')).toBe(10 * 1024 ** 2);
    expect(parseChunkSize('1G')).toBe(1024 ** 3);
    expect(parseChunkSize('1gb')).toBe(1024 ** 3);
    expect(parseChunkSize('1T')).toBe(1024 ** 4);
    expect(parseChunkSize('1TB')).toBe(1024 ** 4);
  });

  it('allows decimals', () => {
    expect(parseChunkSize('1.5MB')).toBe(1.5 * 1024 ** 2);
    expect(parseChunkSize('0.5K')).toBe(512);
    expect(parseChunkSize(' 2.25 G ')).toBe(2.25 * 1024 ** 3);
  });

  it('falls back to 1 MiB for anything else', () => {
    for (const input of ['', 'abc', '10 XB', '-5MB', '1,5MB', 'MB', '1.2.3', '10 M B']) {
      expect(parseChunkSize(input), input).toBe(FALLBACK_CHUNK_SIZE);
    }
    expect(FALLBACK_CHUNK_SIZE).toBe(1024 * 1024);
  });
});

describe('formatChunkSize', () => {
  it('shows the largest unit that keeps the number at least 1', () => {
    expect(formatChunkSize(512)).toBe('512B');
    expect(formatChunkSize(2048)).toBe('2KB');
    expect(formatChunkSize(10 * 1024 ** 2)).toBe('10MB');
    expect(formatChunkSize(1024 ** 3)).toBe('1GB');
    expect(formatChunkSize(3 * 1024 ** 4)).toBe('3TB');
  });

  it('keeps up to two decimals', () => {
    expect(formatChunkSize(1.5 * 1024 ** 2)).toBe('1.5MB');
    expect(formatChunkSize(1234567)).toBe('1.18MB');
  });

  it('reads back what it shows', () => {
    for (const bytes of [1, 1024, 10 * 1024 ** 2, 1.5 * 1024 ** 3, 5 * 1024 ** 4]) {
      expect(parseChunkSize(formatChunkSize(bytes))).toBe(bytes);
    }
  });

  it('moves to the next unit when rounding reaches it', () => {
    expect(formatChunkSize(1024 ** 2 - 1)).toBe('1MB');
  });

  it('shows zero as 0B', () => {
    expect(formatChunkSize(0)).toBe('0B');
  });
});
