import { describe, expect, it } from 'vitest';
import { findNeighbours, isSteppable } from './neighbours';

const item = (name: string, type: string, isDir = false) => ({ path: `/pics/${name}`, isDir, type });

const folder = [
  item('albums', '', true),
  item('a.jpg', 'image'),
  item('notes.txt', 'text'),
  item('b.png', 'image'),
  item('clip.mp4', 'video'),
  item('song.mp3', 'audio'),
  item('paper.pdf', 'pdf'),
  item('data.bin', 'blob'),
  item('todo.md', 'textImmutable'),
];

describe('findNeighbours', () => {
  it('steps to the closest previewable files on each side', () => {
    const { previous, next } = findNeighbours(folder, '/pics/b.png');
    expect(previous?.path).toBe('/pics/a.jpg');
    expect(next?.path).toBe('/pics/clip.mp4');
  });

  it('skips text files and folders', () => {
    expect(findNeighbours(folder, '/pics/a.jpg')).toEqual({ previous: null, next: folder[3] });
    expect(findNeighbours(folder, '/pics/data.bin').next).toBeNull();
  });

  it('does not wrap around at the ends', () => {
    expect(findNeighbours(folder, '/pics/a.jpg').previous).toBeNull();
    expect(findNeighbours(folder, '/pics/data.bin').previous?.path).toBe('/pics/paper.pdf');
  });

  it('has no neighbours for a file the listing does not hold', () => {
    expect(findNeighbours(folder, '/pics/gone.jpg')).toEqual({ previous: null, next: null });
    expect(findNeighbours([], '/pics/a.jpg')).toEqual({ previous: null, next: null });
  });

  it('works from a text file too (opened in the editor, never stepped to)', () => {
    const { previous, next } = findNeighbours(folder, '/pics/notes.txt');
    expect(previous?.path).toBe('/pics/a.jpg');
    expect(next?.path).toBe('/pics/b.png');
  });
});

describe('isSteppable', () => {
  it('takes media, pdf and other files, not text, links or folders', () => {
    expect(['image', 'video', 'audio', 'pdf', 'blob'].every((type) => isSteppable(item('x', type)))).toBe(
      true,
    );
    expect(isSteppable(item('x', 'text'))).toBe(false);
    expect(isSteppable(item('x', 'textImmutable'))).toBe(false);
    expect(isSteppable(item('x', 'invalid_link'))).toBe(false);
    expect(isSteppable(item('x', '', true))).toBe(false);
  });
});
