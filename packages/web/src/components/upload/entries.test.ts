import { describe, expect, it } from 'vitest';
import { carriesFiles, entriesFromDataTransfer, entriesFromFiles } from './entries';

function fileWithPath(name: string, relative: string): File {
  const file = new File(['data'], name);
  Object.defineProperty(file, 'webkitRelativePath', { value: relative });
  return file;
}

/** A file system entry tree as a drop of real folders gives it. */
function fileEntry(file: File) {
  return { name: file.name, isFile: true, isDirectory: false, file: (ok: (f: File) => void) => ok(file) };
}
function dirEntry(name: string, children: unknown[], batch = 2) {
  return {
    name,
    isFile: false,
    isDirectory: true,
    createReader: () => {
      let offset = 0;
      return {
        readEntries: (ok: (entries: unknown[]) => void) => {
          const slice = children.slice(offset, offset + batch);
          offset += slice.length;
          setTimeout(() => ok(slice));
        },
      };
    },
  };
}
function transfer(items: { entry?: unknown; file?: File }[], types = ['Files']): DataTransfer {
  return {
    types,
    files: items.flatMap((item) => (item.file ? [item.file] : [])),
    items: items.map((item) => ({
      kind: 'file',
      webkitGetAsEntry: () => item.entry ?? null,
      getAsFile: () => item.file ?? null,
    })),
  } as unknown as DataTransfer;
}

describe('entriesFromFiles', () => {
  it('keeps a folder pick relative path, and a plain pick name', () => {
    expect(
      entriesFromFiles([new File(['a'], 'a.txt'), fileWithPath('b.jpg', 'photos/2024/b.jpg')]).map(
        (entry) => entry.relativePath,
      ),
    ).toEqual(['a.txt', 'photos/2024/b.jpg']);
  });
});

describe('entriesFromDataTransfer', () => {
  it('walks dropped folders, reading every batch, and keeps empty folders', async () => {
    const a = new File(['a'], 'a.txt');
    const b = new File(['b'], 'b.txt');
    const c = new File(['c'], 'c.txt');
    const d = new File(['d'], 'd.txt');
    const tree = dirEntry('docs', [
      fileEntry(a),
      fileEntry(b),
      fileEntry(c),
      dirEntry('sub', [fileEntry(d)]),
      dirEntry('empty', []),
    ]);
    const loose = new File(['l'], 'loose.txt');
    const entries = await entriesFromDataTransfer(transfer([{ entry: tree }, { entry: fileEntry(loose) }]));
    expect(entries.map((entry) => [entry.relativePath, entry.file?.name])).toEqual([
      ['docs/a.txt', 'a.txt'],
      ['docs/b.txt', 'b.txt'],
      ['docs/c.txt', 'c.txt'],
      ['docs/sub/d.txt', 'd.txt'],
      ['docs/empty', undefined],
      ['loose.txt', 'loose.txt'],
    ]);
  });

  it('takes the files of items without a file system entry', async () => {
    const file = new File(['x'], 'x.txt');
    const entries = await entriesFromDataTransfer(transfer([{ file }]));
    expect(entries).toEqual([{ relativePath: 'x.txt', file }]);
  });

  it('tells external file drags from other drags', () => {
    expect(carriesFiles(transfer([], ['Files']))).toBe(true);
    expect(carriesFiles(transfer([], ['text/plain']))).toBe(false);
    expect(carriesFiles(null)).toBe(false);
  });
});
