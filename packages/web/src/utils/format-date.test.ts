import { describe, expect, it } from 'vitest';
import { formatRelative } from './format-date';

describe('formatRelative', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

  it('uses the largest unit that fits', () => {
    expect(formatRelative(at(30), 'en', now)).toBe('in 30 seconds');
    expect(formatRelative(at(-2 * 3600), 'en', now)).toBe('2 hours ago');
    expect(formatRelative(at(3 * 86400), 'en', now)).toBe('in 3 days');
  });

  it('moves to the next unit when rounding reaches it', () => {
    expect(formatRelative(at(3599), 'en', now)).toBe('in 1 hour');
    expect(formatRelative(at(59.6), 'en', now)).toBe('in 1 minute');
  });
});
