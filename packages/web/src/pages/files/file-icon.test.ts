import { describe, expect, it } from 'vitest';
import { fileIcon, fileKind, isDotfile, KIND_ICONS, type FileKind } from './file-icon';

const file = (name: string, type = 'blob', mime?: string) => ({ name, type, isDir: false, mime });

describe('fileKind', () => {
  it('names every kind of the listing by extension, whatever its case', () => {
    const cases: [string, FileKind][] = [
      ['holiday.JPG', 'image'],
      ['clip.mkv', 'video'],
      ['song.flac', 'audio'],
      ['paper.pdf', 'pdf'],
      ['notes.txt', 'text'],
      ['README.md', 'text'],
      ['main.ts', 'code'],
      ['page.html', 'code'],
      ['backup.tar.gz', 'archive'],
      ['photos.7z', 'archive'],
      ['budget.xlsx', 'spreadsheet'],
      ['data.csv', 'spreadsheet'],
      ['letter.docx', 'document'],
      ['thesis.odt', 'document'],
      ['talk.pptx', 'presentation'],
      ['Inter.woff2', 'font'],
      ['debian.iso', 'diskImage'],
      ['setup.exe', 'executable'],
      ['tool.AppImage', 'executable'],
      ['mystery.qqq', 'unknown'],
    ];
    for (const [name, kind] of cases) expect(fileKind(file(name)), name).toBe(kind);
  });

  it('knows names without an extension, and a dot at the start is no extension', () => {
    expect(fileKind(file('Makefile'))).toBe('code');
    expect(fileKind(file('Dockerfile'))).toBe('code');
    expect(fileKind(file('LICENSE'))).toBe('text');
    expect(fileKind(file('.zip'))).toBe('unknown');
    expect(fileKind(file('.bashrc', 'text'))).toBe('text');
  });

  it("falls back to the server's detected type, then to the MIME type", () => {
    expect(fileKind(file('IMG_0001', 'image'))).toBe('image');
    expect(fileKind(file('recording', 'audio'))).toBe('audio');
    expect(fileKind(file('scan', 'pdf'))).toBe('pdf');
    expect(fileKind(file('notes', 'textImmutable'))).toBe('text');
    expect(fileKind(file('upload', 'blob', 'application/zip'))).toBe('archive');
    expect(fileKind(file('upload', 'blob', 'font/woff2'))).toBe('font');
    expect(fileKind(file('upload', 'blob', 'application/vnd.oasis.opendocument.spreadsheet'))).toBe(
      'spreadsheet',
    );
    expect(
      fileKind(
        file('upload', 'blob', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'),
      ),
    ).toBe('presentation');
    expect(fileKind(file('upload', 'blob', 'application/msword'))).toBe('document');
    expect(fileKind(file('upload', 'blob', 'application/x-iso9660-image'))).toBe('diskImage');
    expect(fileKind(file('upload', 'blob', 'application/x-msdownload'))).toBe('executable');
    expect(fileKind(file('upload', 'blob', 'application/json; charset=utf-8'))).toBe('code');
    expect(fileKind(file('upload', 'blob', 'text/plain'))).toBe('text');
    expect(fileKind(file('upload', 'blob', 'application/octet-stream'))).toBe('unknown');
  });

  it('lets the name win over a vaguer detected type', () => {
    expect(fileKind(file('app.py', 'text'))).toBe('code');
    expect(fileKind(file('table.csv', 'text'))).toBe('spreadsheet');
  });

  it('puts folders and broken links first, whatever their names', () => {
    expect(fileKind({ name: 'photos.zip', type: '', isDir: true })).toBe('folder');
    expect(fileKind(file('gone.pdf', 'invalid_link'))).toBe('brokenLink');
  });
});

describe('fileIcon', () => {
  it('gives each kind its own glyph', () => {
    const glyphs = Object.values(KIND_ICONS);
    expect(new Set(glyphs).size).toBe(glyphs.length);
    expect(fileIcon(file('budget.ods'))).toBe('table_chart');
    expect(fileIcon({ name: 'docs', type: '', isDir: true })).toBe('folder');
    expect(fileIcon(file('x.bin.unknown'))).toBe('insert_drive_file');
  });
});

describe('isDotfile', () => {
  it('is a name that starts with a dot', () => {
    expect(isDotfile('.env')).toBe(true);
    expect(isDotfile('.git')).toBe(true);
    expect(isDotfile('env.')).toBe(false);
    expect(isDotfile('notes.txt')).toBe(false);
  });
});
