import { syntaxHighlighting } from '@codemirror/language';
import type { Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { darkHighlightStyle, lightHighlightStyle } from './editor-highlight';

/**
 * The editor in the app's colours: the surfaces come from the theme's CSS variables, so a theme
 * switch needs nothing here; only what CodeMirror picks by itself (selection, syntax colours)
 * depends on `dark`.
 */
export function editorTheme(dark: boolean): Extension {
  const selection = dark ? 'rgba(92, 155, 255, 0.32)' : 'rgba(22, 89, 200, 0.22)';
  const chrome = EditorView.theme(
    {
      '&': {
        height: '100%',
        color: 'var(--text)',
        backgroundColor: 'var(--surface)',
        fontSize: '14px',
      },
      '&.cm-focused': { outline: 'none' },
      '.cm-scroller': { fontFamily: 'var(--font-mono)', lineHeight: '1.55' },
      '.cm-content': { caretColor: 'var(--primary)' },
      '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--primary)', borderLeftWidth: '2px' },
      '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection':
        { backgroundColor: selection },
      '.cm-gutters': {
        backgroundColor: 'var(--surface-alt)',
        color: 'var(--text-muted)',
        borderRight: '1px solid var(--border)',
      },
      '.cm-activeLine': { backgroundColor: 'var(--hover)' },
      '.cm-activeLineGutter': { backgroundColor: 'var(--hover)', color: 'var(--text)' },
      '.cm-foldPlaceholder': {
        backgroundColor: 'var(--surface-alt)',
        border: '1px solid var(--border)',
        color: 'var(--text-muted)',
      },
      '.cm-panels': { backgroundColor: 'var(--surface-alt)', color: 'var(--text)' },
      '.cm-panels.cm-panels-top': { borderBottom: '1px solid var(--border)' },
      '.cm-panels.cm-panels-bottom': { borderTop: '1px solid var(--border)' },
      '.cm-panel input, .cm-panel button, .cm-textfield': {
        color: 'var(--text)',
        backgroundColor: 'var(--input-bg)',
        border: '1px solid var(--input-border)',
        borderRadius: '4px',
      },
      '.cm-button': { backgroundImage: 'none', backgroundColor: 'var(--surface)' },
      '.cm-searchMatch': { backgroundColor: dark ? 'rgba(255, 214, 0, 0.22)' : 'rgba(255, 214, 0, 0.45)' },
      '.cm-searchMatch.cm-searchMatch-selected': { backgroundColor: selection },
      '.cm-selectionMatch': { backgroundColor: dark ? 'rgba(255, 255, 255, 0.1)' : 'rgba(15, 23, 42, 0.08)' },
      '&.cm-focused .cm-matchingBracket': { backgroundColor: selection, outline: '1px solid var(--border)' },
      '.cm-tooltip': {
        color: 'var(--text)',
        backgroundColor: 'var(--surface)',
        border: '1px solid var(--border)',
        borderRadius: '6px',
      },
    },
    { dark },
  );
  // One Dark's colours on the dark surface, CodeMirror's defaults on white (both at 4.5:1).
  return [chrome, syntaxHighlighting(dark ? darkHighlightStyle : lightHighlightStyle)];
}
