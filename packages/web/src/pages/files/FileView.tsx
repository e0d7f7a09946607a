import type { FileInfo } from '@filebrowser/contract';
import { lazy, Suspense } from 'react';
import { Spinner } from '../../components/Spinner';
import { Preview } from './preview/Preview';
import { tooLargeToEdit } from './text-limit';

// CodeMirror is the biggest part of the app: it loads only when a text file opens.
const Editor = lazy(() => import('./editor/Editor'));

/** Whether a file opens in the editor rather than in the preview. */
export function opensInEditor(file: Pick<FileInfo, 'type'>): boolean {
  return file.type === 'text' || file.type === 'textImmutable';
}

/** A single file of the file browser: text in the editor, anything else (or too big) in the preview. */
export function FileView({ file }: { file: FileInfo }) {
  if (!opensInEditor(file) || tooLargeToEdit(file)) return <Preview file={file} />;
  return (
    <Suspense fallback={<Spinner />}>
      {/* Keyed: another file is another editor, with its own undo history and saved state. */}
      <Editor key={file.path} file={file} />
    </Suspense>
  );
}
