import { useTranslation } from 'react-i18next';
import { useShellAvailable } from '../../components/shell/use-shell-available';
import { useUser } from '../../hooks/use-user';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { useShellStore } from '../../stores/shell';
import { nextViewMode } from './listing/listing-layout';
import { currentSelection, downloadEntries, switchViewMode } from './operations';

/** One button of the file browser's action bar. */
export interface FileAction {
  id: string;
  icon: string;
  label: string;
  run: () => void;
  /** A number shown on the button (how many entries a download takes). */
  counter?: number;
  /** For toggles: whether the toggle is on. */
  pressed?: boolean;
}

/** The view switch shows the mode it switches to. */
const VIEW_ICONS = { list: 'view_list', mosaic: 'view_module', 'mosaic gallery': 'grid_view' } as const;

/**
 * The actions of the listing on screen, each only when the user has its permission and the
 * selection suits it (spec 5 and 6): `selection` acts on the selected entries, `general` on the
 * folder or the view.
 */
export function useFileActions(): { selection: FileAction[]; general: FileAction[] } {
  const { t } = useTranslation();
  const user = useUser();
  const count = useFilesStore((state) => state.selection.paths.size);
  const multiple = useFilesStore((state) => state.multiple);
  const setMultiple = useFilesStore((state) => state.setMultiple);
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const shellAvailable = useShellAvailable();
  const shellOpen = useShellStore((state) => state.open);
  const toggleShell = useShellStore((state) => state.toggle);
  const { perm } = user;
  const folderPath = () => useFilesStore.getState().listing?.path ?? '/';

  const selection: FileAction[] = [];
  if (count === 1 && perm.share && perm.download) {
    selection.push({
      id: 'share',
      icon: 'share',
      label: t('buttons.share'),
      run: () => {
        const [item] = currentSelection();
        // Folder links keep their trailing slash, as File Browser's client made them.
        if (item) openPrompt('share', { path: item.isDir ? `${item.path.replace(/\/+$/, '')}/` : item.path });
      },
    });
  }
  if (count === 1 && perm.rename) {
    selection.push({
      id: 'rename',
      icon: 'mode_edit',
      label: t('buttons.rename'),
      run: () => {
        const [item] = currentSelection();
        if (item) openPrompt('rename', { item });
      },
    });
  }
  if (count > 0 && perm.create) {
    selection.push({
      id: 'copy',
      icon: 'content_copy',
      label: t('buttons.copyFile'),
      run: () => openPrompt('copy', { items: currentSelection(), from: folderPath() }),
    });
  }
  if (count > 0 && perm.rename) {
    selection.push({
      id: 'move',
      icon: 'forward',
      label: t('buttons.moveFile'),
      run: () => openPrompt('move', { items: currentSelection(), from: folderPath() }),
    });
  }
  if (count > 0 && perm.delete) {
    selection.push({
      id: 'delete',
      icon: 'delete',
      label: t('buttons.delete'),
      run: () => openPrompt('delete', { items: currentSelection() }),
    });
  }

  const general: FileAction[] = [];
  if (shellAvailable) {
    general.push({
      id: 'shell',
      icon: 'code',
      label: t('shell.toggle'),
      pressed: shellOpen,
      run: toggleShell,
    });
  }
  const next = nextViewMode(user.viewMode);
  general.push({
    id: 'switch-view',
    icon: VIEW_ICONS[next],
    label: t('buttons.switchView', { mode: t(`settings.viewModes.${next}`) }),
    run: () => void switchViewMode(),
  });
  if (perm.download) {
    general.push({
      id: 'download',
      icon: 'file_download',
      label: t('buttons.download'),
      counter: count > 0 ? count : undefined,
      run: () => downloadEntries(currentSelection(), folderPath()),
    });
  }
  if (perm.create) {
    general.push({
      id: 'upload',
      icon: 'file_upload',
      label: t('upload.button'),
      run: () => {
        const folder = useFilesStore.getState().listing;
        openPrompt('upload', { base: folderPath(), ...(folder?.items && { items: folder.items }) });
      },
    });
  }
  general.push({
    id: 'info',
    icon: 'info',
    label: t('buttons.info'),
    run: () => {
      const folder = useFilesStore.getState().listing;
      if (folder) openPrompt('info', { items: currentSelection(), folder });
    },
  });
  general.push({
    id: 'select-multiple',
    icon: 'check_circle',
    label: t('buttons.selectMultiple'),
    pressed: multiple,
    run: () => setMultiple(!multiple),
  });
  return { selection, general };
}
