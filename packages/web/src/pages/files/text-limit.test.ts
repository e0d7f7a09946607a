import { TEXT_CONTENT_LIMIT, type FileInfo } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import { tooLargeToEdit } from './text-limit';

const text = (size: number, extra: Partial<FileInfo> = {}) => ({ type: 'text', size, ...extra });

describe('tooLargeToEdit', () => {
  it('is a text file without content past TEXT_CONTENT_LIMIT, and nothing else', () => {
    expect(tooLargeToEdit(text(TEXT_CONTENT_LIMIT + 1))).toBe(true);
    expect(tooLargeToEdit(text(TEXT_CONTENT_LIMIT + 1, { type: 'textImmutable' }))).toBe(true);
    // At the limit the server sends the content; without it (no download permission) the editor
    // opens read-only as before.
    expect(tooLargeToEdit(text(TEXT_CONTENT_LIMIT))).toBe(false);
    expect(tooLargeToEdit(text(TEXT_CONTENT_LIMIT + 1, { content: 'x' }))).toBe(false);
    expect(tooLargeToEdit(text(TEXT_CONTENT_LIMIT + 1, { type: 'blob' }))).toBe(false);
  });
});
