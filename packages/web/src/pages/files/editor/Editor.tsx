import type { FileInfo } from '@filebrowser/contract';
import type { Text } from '@codemirror/state';
import { EditorView, type ViewUpdate } from '@codemirror/view';
import CodeMirror from '@uiw/react-codemirror';
import { useCallback, useDeferredValue, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { saveFileContent } from '../../../api/file-view';
import { Icon } from '../../../components/Icon';
import { ShareButton } from '../../../components/share/ShareButton';
import { useDarkMode } from '../../../hooks/use-dark-mode';
import { useUser } from '../../../hooks/use-user';
import { useLayoutStore } from '../../../stores/layout';
import { showError, showSuccess } from '../../../stores/toasts';
import { filesRoute, parentPath } from '../../../utils/paths';
import { CsvTable } from '../viewers/CsvTable';
import { MarkdownView } from '../viewers/MarkdownView';
import { showsSource, viewModesFor, type ViewMode } from '../viewers/view-modes';
import { ViewModeSwitch } from '../viewers/ViewModeSwitch';
import { editorTheme } from './editor-theme';
import { useLeaveGuard } from './leave-guard';
import { useLanguage } from './use-language';
import '../../../styles/editor.css';
import { useWindowKeyDown } from '../../../hooks/use-window-key-down';

const BASIC_SETUP = {
  // Suggestions from the language's keywords get in the way of editing notes and configs.
  autocompletion: false,
  highlightActiveLine: true,
  foldGutter: true,
};

function isSaveShortcut(event: KeyboardEvent): boolean {
  return (
    (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 's'
  );
}

/** Whether `file` may be changed here: never a textImmutable file, nor without modify permission. */
export function isReadOnly(file: Pick<FileInfo, 'type' | 'content' | 'size'>, canModify: boolean): boolean {
  // Without its content (the server sends none without download permission) saving would
  // replace the file with an empty one.
  const contentMissing = file.content === undefined && file.size > 0;
  return file.type === 'textImmutable' || !canModify || contentMissing;
}

/**
 * A text file in CodeMirror with highlighting by its name. Saving (button or Ctrl/Cmd+S) writes
 * it back; leaving with unsaved changes asks first. A CSV/TSV file opens as a table and a
 * Markdown file rendered beside its source; the editor stays mounted behind the other views, so
 * switching keeps the undo history and unsaved changes, and the views show the text as typed.
 */
export function Editor({ file }: { file: FileInfo }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const user = useUser();
  const openPrompt = useLayoutStore((store) => store.openPrompt);
  const closeAllPrompts = useLayoutStore((store) => store.closeAllPrompts);
  const dark = useDarkMode();
  const language = useLanguage(file.name);
  const readOnly = isReadOnly(file, user.perm.modify);
  // The text the editor starts from is fixed for its life: a later reload of the file (after a
  // save, or a listing refresh) must not replace what is being typed.
  const [initial] = useState(() => file.content ?? '');
  const view = useRef<EditorView | null>(null);
  const savedDoc = useRef<Text | null>(null);
  const saving = useRef(false);
  const [dirty, setDirty] = useState(false);
  const modes = useMemo(() => viewModesFor(file.name, readOnly), [file.name, readOnly]);
  const [mode, setMode] = useState<ViewMode>(modes[0] ?? 'source');
  // The document itself (immutable, cheap to keep): turned into a string only for a view that
  // shows it, and deferred so typing stays ahead of re-rendering a big table or page.
  const [doc, setDoc] = useState<Text | null>(null);
  const shownDoc = useDeferredValue(doc);
  const viewText = useMemo(
    () => (mode === 'source' ? '' : (shownDoc?.toString() ?? initial)),
    [mode, shownDoc, initial],
  );
  const [busy, setBusy] = useState(false);
  const folderRoute = filesRoute(parentPath(file.path), true);

  const theme = useMemo(() => editorTheme(dark), [dark]);
  const label = t('editor.label', { name: file.name });
  const extensions = useMemo(
    () => [EditorView.lineWrapping, EditorView.contentAttributes.of({ 'aria-label': label }), ...language],
    [language, label],
  );

  const save = useCallback(async () => {
    const editor = view.current;
    if (!editor || readOnly || saving.current) return;
    const doc = editor.state.doc;
    saving.current = true;
    setBusy(true);
    try {
      await saveFileContent(file.path, doc.toString());
      savedDoc.current = doc;
      // Typing may have gone on while the request was out.
      setDirty(!editor.state.doc.eq(doc));
      showSuccess(t('editor.saved'));
    } catch (error) {
      showError(error);
    } finally {
      saving.current = false;
      setBusy(false);
    }
  }, [file.path, readOnly, t]);

  // The question replaces any open prompt (a search result link may be the way out), as the
  // stack shows only its oldest prompt. Discarding leaves; closing the question stays.
  useLeaveGuard(dirty, (leave, stay) => {
    closeAllPrompts();
    openPrompt('discardEditorChanges', { onDiscard: leave }, stay);
  });

  const close = () => void navigate(folderRoute);

  useWindowKeyDown((event) => {
    if (!isSaveShortcut(event)) return;
    // The browser's "save page" is never what is meant here, even when read-only.
    event.preventDefault();
    if (!event.repeat) void save();
  });

  const onUpdate = useCallback((update: ViewUpdate) => {
    if (!update.docChanged) return;
    setDoc(update.state.doc);
    const saved = savedDoc.current;
    setDirty(saved === null || !update.state.doc.eq(saved));
  }, []);

  return (
    <section className="card card--wide editor" aria-labelledby="editor-title">
      <div className="editor__bar">
        <button
          type="button"
          className="icon-button"
          aria-label={t('editor.close')}
          title={t('editor.close')}
          onClick={close}
        >
          <Icon name="close" />
        </button>
        <h2 id="editor-title" className="editor__title" title={file.name}>
          {file.name}
        </h2>
        {dirty && (
          <span className="editor__state" role="status">
            <span className="editor__dot" aria-hidden="true" />
            {t('editor.unsaved')}
          </span>
        )}
        <ViewModeSwitch modes={modes} mode={mode} onChange={setMode} />
        <ShareButton path={file.path} />
        {readOnly ? (
          <span className="editor__badge">
            <Icon name="lock" />
            {t('editor.readOnly')}
          </span>
        ) : (
          <button
            type="button"
            className="button"
            onClick={() => void save()}
            disabled={busy}
            aria-keyshortcuts="Control+S Meta+S"
          >
            <Icon name="save" />
            {t('buttons.save')}
          </button>
        )}
      </div>
      <div className={`editor__body editor__body--${mode}`}>
        {mode === 'table' && <CsvTable text={viewText} name={file.name} />}
        <div className="editor__source" hidden={!showsSource(mode)}>
          <CodeMirror
            value={initial}
            theme={theme}
            extensions={extensions}
            basicSetup={BASIC_SETUP}
            readOnly={readOnly}
            height="100%"
            autoFocus={!readOnly && showsSource(modes[0] ?? 'source')}
            onCreateEditor={(editor) => {
              view.current = editor;
              savedDoc.current = editor.state.doc;
            }}
            onUpdate={onUpdate}
          />
        </div>
        {(mode === 'rendered' || mode === 'split') && (
          <MarkdownView text={viewText} path={file.path} name={file.name} />
        )}
      </div>
    </section>
  );
}

export default Editor;
