import { describe, expect, it } from 'vitest';
import { insertTypeFilter, isRunnable, QUICK_TYPES } from './search-query';

describe('insertTypeFilter', () => {
  it('starts an empty query with the filter and a space to type after', () => {
    expect(insertTypeFilter('', 'image')).toBe('type:image ');
  });

  it('puts the filter in front of what was typed', () => {
    expect(insertTypeFilter('holiday', 'video')).toBe('type:video holiday');
  });

  it('combines different types (the server ORs them)', () => {
    expect(insertTypeFilter('type:image ', 'audio')).toBe('type:audio type:image ');
  });

  it('does not add a type twice', () => {
    expect(insertTypeFilter('type:pdf report', 'pdf')).toBe('type:pdf report');
  });

  it('leaves one space after the filter, as two would make a match-all word', () => {
    expect(insertTypeFilter('   notes', 'image')).toBe('type:image notes');
  });

  it('keeps the spaces of a quoted name', () => {
    expect(insertTypeFilter('"my  file"', 'pdf')).toBe('type:pdf "my  file"');
  });

  it('offers images, music, video and pdf', () => {
    expect(QUICK_TYPES.map((chip) => chip.type)).toEqual(['image', 'audio', 'video', 'pdf']);
  });
});

describe('isRunnable', () => {
  it('refuses blank text', () => {
    expect(isRunnable('')).toBe(false);
    expect(isRunnable('   ')).toBe(false);
    expect(isRunnable('type:image ')).toBe(true);
  });
});
