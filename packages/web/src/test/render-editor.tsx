import type { FileInfo, Permissions } from '@filebrowser/contract';
import { EditorView } from '@codemirror/view';
import { act, screen } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { Editor } from '../pages/files/editor/Editor';
import { useAuthStore } from '../stores/auth';
import { tokenUser } from './fixtures';
import { renderWithApp } from './render';

/** A text file as GET /api/resources answers it. */
export function textFile(path: string, content: string): FileInfo {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return {
    path,
    name,
    size: content.length,
    extension: name.includes('.') ? name.slice(name.lastIndexOf('.')) : '',
    modified: '2025-03-01T10:20:30Z',
    mode: 420,
    isDir: false,
    isSymlink: false,
    type: 'text',
    content,
  };
}

/** The editor on its route, for a user with `perm`; returns its CodeMirror view. */
export async function renderEditor(file: FileInfo, perm: Partial<Permissions>): Promise<EditorView> {
  useAuthStore.setState({ user: tokenUser(perm), jwt: 'a.b.c' });
  await renderWithApp(
    <Routes>
      <Route path="/files/*" element={<Editor file={file} />} />
    </Routes>,
    { route: `/files${file.path}` },
  );
  const content = screen.getByRole('textbox', { name: `Contents of ${file.name}`, hidden: true });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error('no editor view');
  return view;
}

/** Types at the end of the document, as a user would. */
export function typeAtEnd(view: EditorView, text: string): void {
  act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: text } }));
}

/** Whether the editor is on screen (it stays mounted, hidden, behind the other views). */
export function editorShown(view: EditorView): boolean {
  return view.dom.closest('[hidden]') === null;
}
