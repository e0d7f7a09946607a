import { useTranslation } from 'react-i18next';
import { useWindowKeyDown } from '../../hooks/use-window-key-down';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { showSuccess } from '../../stores/toasts';
import { selectAll } from '../../utils/selection';
import { splitEntries } from './listing/listing-layout';
import { allowed, currentSelection, downloadEntries, pasteInto, putInClipboard } from './operations';

/** Keys typed into a field belong to the field. */
function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** Text the user selected on the page: Ctrl+C then copies that text, as everywhere else. */
function hasTextSelection(): boolean {
  return (window.getSelection?.()?.toString() ?? '') !== '';
}

/**
 * The listing's keyboard: Escape, Delete, F2 and Ctrl/Cmd with C, X, V, A, S (and F, see the
 * search hook below). Nothing happens while a prompt is open: the prompt owns the keyboard.
 */
export function useListingShortcuts(): void {
  const { t } = useTranslation();

  useWindowKeyDown((event) => {
    if (event.defaultPrevented || event.isComposing) return;
    if (useLayoutStore.getState().prompts.length > 0) return;
    if (isEditable(event.target)) return;
    const files = useFilesStore.getState();
    const folder = files.listing;
    if (!folder) return;
    const { openPrompt } = useLayoutStore.getState();
    const items = currentSelection();

    switch (event.key) {
      case 'Escape':
        if (files.selection.paths.size > 0) files.clearSelection();
        else if (files.multiple) files.setMultiple(false);
        return;
      case 'Delete':
        if (!allowed('delete') || items.length === 0) return;
        event.preventDefault();
        openPrompt('delete', { items });
        return;
      case 'F2': {
        const [item] = items;
        if (!allowed('rename') || items.length !== 1 || !item) return;
        event.preventDefault();
        openPrompt('rename', { item });
        return;
      }
    }

    if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
    switch (event.key.toLowerCase()) {
      case 'c':
      case 'x': {
        if (hasTextSelection()) return;
        const key = event.key.toLowerCase() === 'x' ? 'x' : 'c';
        if (!putInClipboard(key, items, folder.path)) return;
        event.preventDefault();
        showSuccess(
          key === 'x'
            ? t('files.clipboardCut', { count: items.length })
            : t('files.clipboardCopied', { count: items.length }),
        );
        return;
      }
      case 'v':
        event.preventDefault();
        void pasteInto(folder);
        return;
      case 'a':
        event.preventDefault();
        files.setSelection(selectAll(splitEntries(folder.items ?? []).ordered.map((item) => item.path)));
        return;
      case 's':
        // Always taken: the browser's "save page" is of no use here.
        event.preventDefault();
        downloadEntries(items, folder.path);
        return;
    }
  });
}
