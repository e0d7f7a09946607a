import { describe, expect, it } from 'vitest';
import { clashingNames, topLevelName } from './clash';

const destination = [{ name: 'photos' }, { name: 'notes.txt' }, { name: 'Report.pdf' }];

describe('clash detection', () => {
  it('finds names that exist in the destination', () => {
    expect(clashingNames(['notes.txt', 'new.txt'], destination)).toEqual(['notes.txt']);
  });

  it('finds nothing when every name is free', () => {
    expect(clashingNames(['a.txt', 'b'], destination)).toEqual([]);
    expect(clashingNames([], destination)).toEqual([]);
    expect(clashingNames(['a.txt'], [])).toEqual([]);
  });

  it('compares case-sensitively, as the server does', () => {
    expect(clashingNames(['report.pdf', 'NOTES.TXT'], destination)).toEqual([]);
  });

  it('compares the first segment of entries of a dropped folder, once per folder', () => {
    expect(topLevelName('a.txt')).toBe('a.txt');
    expect(topLevelName('photos/2024/a.jpg')).toBe('photos');
    expect(topLevelName('/photos/b.jpg')).toBe('photos');
    expect(clashingNames(['photos/2024/a.jpg', 'photos/b.jpg', 'music/x.mp3'], destination)).toEqual([
      'photos',
    ]);
  });
});
