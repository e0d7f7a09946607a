import type { Share } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import { checkDuration, expiryLabel, newShareRequest, sortShareLinks } from './share-links';

const link = (hash: string, expire: number): Share => ({
  hash,
  path: '/a.txt',
  userID: 1,
  expire,
  hasPassword: false,
});

describe('sortShareLinks', () => {
  it('puts permanent links first, then the soonest to expire', () => {
    const sorted = sortShareLinks([link('late', 300), link('p1', 0), link('soon', 100), link('p2', 0)]);
    expect(sorted.map((l) => l.hash)).toEqual(['p1', 'p2', 'soon', 'late']);
  });

  it('leaves the input alone', () => {
    const input = [link('b', 2), link('a', 1)];
    sortShareLinks(input);
    expect(input.map((l) => l.hash)).toEqual(['b', 'a']);
  });
});

describe('expiryLabel', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  const seconds = now.getTime() / 1000;

  it('says permanent for links without expiry', () => {
    expect(expiryLabel(link('p', 0), 'permanent', 'en', now)).toBe('permanent');
  });

  it('gives the distance in the largest fitting unit', () => {
    expect(expiryLabel(link('h', seconds + 3 * 3600), 'permanent', 'en', now)).toBe('in 3 hours');
    expect(expiryLabel(link('d', seconds + 2 * 86400), 'permanent', 'en', now)).toBe('in 2 days');
    expect(expiryLabel(link('s', seconds + 30), 'permanent', 'en', now)).toBe('in 30 seconds');
    expect(expiryLabel(link('m', seconds + 90), 'permanent', 'en', now)).toBe('in 2 minutes');
    expect(expiryLabel(link('x', seconds + 3 * 3600), 'permanent', 'de', now)).toBe('in 3 Stunden');
  });
});

describe('checkDuration', () => {
  it('sends empty and 0 as no expiry', () => {
    expect(checkDuration('')).toEqual({ ok: true, expires: '' });
    expect(checkDuration('  ')).toEqual({ ok: true, expires: '' });
    expect(checkDuration('0')).toEqual({ ok: true, expires: '' });
  });

  it('accepts whole numbers up to 2147483647 and nothing else', () => {
    expect(checkDuration(' 12 ')).toEqual({ ok: true, expires: '12' });
    expect(checkDuration('2147483647')).toEqual({ ok: true, expires: '2147483647' });
    for (const bad of ['2147483648', '-1', '1.5', '1e3', 'soon']) expect(checkDuration(bad).ok).toBe(false);
  });
});

describe('newShareRequest', () => {
  it('trims the password and keeps the unit', () => {
    expect(newShareRequest('2', 'days', '  secret ')).toEqual({
      expires: '2',
      unit: 'days',
      password: 'secret',
    });
    expect(newShareRequest('x', 'days', '')).toBeUndefined();
  });
});
