import type { FileInfo, FileItem } from '@filebrowser/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../../api/client';
import { createFolder, fetchResource } from '../../../api/resources';
import { Icon } from '../../../components/Icon';
import { showError } from '../../../stores/toasts';
import { buildBreadcrumbs } from '../../../utils/breadcrumbs';
import { joinPath, parentPath } from '../../../utils/paths';
import { isInside } from '../operations';

export type FolderState =
  { status: 'loading' } | { status: 'ready'; folder: FileInfo } | { status: 'error'; message: string };

/** Loads the folder the picker shows; `version` reloads it (after creating a folder in it). */
export function useFolder(path: string, version: number): FolderState {
  const [state, setState] = useState<FolderState>({ status: 'loading' });
  useEffect(() => {
    const controller = new AbortController();
    let active = true;
    setState({ status: 'loading' });
    fetchResource(path.endsWith('/') ? path : `${path}/`, controller.signal).then(
      (folder) => active && setState({ status: 'ready', folder }),
      (error: unknown) => active && setState({ status: 'error', message: errorText(error) }),
    );
    return () => {
      active = false;
      controller.abort();
    };
  }, [path, version]);
  return state;
}

interface FolderPickerProps {
  path: string;
  state: FolderState;
  /** Entries being moved or copied: their folders cannot be a destination. */
  moving: readonly FileItem[];
  canCreate: boolean;
  onNavigate: (path: string) => void;
  onCreated: (path: string) => void;
}

/** Browses folders to pick a destination: the folder shown is the one chosen. */
export function FolderPicker({ path, state, moving, canCreate, onNavigate, onCreated }: FolderPickerProps) {
  const { t } = useTranslation();
  const [newName, setNewName] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const crumbs = buildBreadcrumbs(path);
  const folders = state.status === 'ready' ? (state.folder.items ?? []).filter((item) => item.isDir) : [];

  const create = async () => {
    const name = newName?.trim();
    if (!name || creating) return;
    setCreating(true);
    const created = joinPath(path, name);
    try {
      await createFolder(created);
      setNewName(null);
      onCreated(`${created}/`);
    } catch (error) {
      showError(error);
    } finally {
      setCreating(false);
    }
  };

  return (
    <div className="picker">
      <nav className="picker__path" aria-label={t('prompts.transfer.location')}>
        <button
          type="button"
          className="picker__crumb"
          onClick={() => onNavigate('/')}
          aria-label={t('files.home')}
        >
          <Icon name="home" />
        </button>
        {crumbs.map((crumb) => (
          <span key={crumb.path} className="picker__crumb-wrap">
            <Icon name="chevron_right" className="picker__separator" />
            <button type="button" className="picker__crumb" onClick={() => onNavigate(crumb.path)}>
              {crumb.name}
            </button>
          </span>
        ))}
      </nav>
      <ul
        className="picker__list"
        aria-label={t('prompts.transfer.folders')}
        aria-busy={state.status === 'loading'}
      >
        {path !== '/' && (
          <li>
            <button type="button" className="picker__entry" onClick={() => onNavigate(parentPath(path))}>
              <Icon name="arrow_upward" />
              <span>{t('prompts.transfer.up')}</span>
            </button>
          </li>
        )}
        {state.status === 'error' && <li className="picker__note picker__note--error">{state.message}</li>}
        {state.status === 'ready' && folders.length === 0 && (
          <li className="picker__note">{t('prompts.transfer.noFolders')}</li>
        )}
        {folders.map((folder) => {
          const blocked = moving.some((item) => isInside(folder.path, item.path));
          return (
            <li key={folder.path}>
              <button
                type="button"
                className="picker__entry"
                disabled={blocked}
                onClick={() => onNavigate(`${folder.path.replace(/\/+$/, '')}/`)}
              >
                <Icon name="folder" className="picker__folder" />
                <span>{folder.name}</span>
                <Icon name="chevron_right" className="picker__enter" />
              </button>
            </li>
          );
        })}
      </ul>
      {canCreate &&
        (newName === null ? (
          <button type="button" className="button button--flat picker__new" onClick={() => setNewName('')}>
            <Icon name="create_new_folder" />
            {t('sidebar.newFolder')}
          </button>
        ) : (
          <form
            className="picker__create"
            onSubmit={(event) => {
              event.preventDefault();
              void create();
            }}
          >
            <input
              className="input"
              type="text"
              value={newName}
              autoFocus
              aria-label={t('prompts.newDir.message')}
              placeholder={t('prompts.transfer.newFolderName')}
              onChange={(event) => setNewName(event.target.value)}
              onKeyDown={(event) => {
                // Escape leaves the name field, not the whole dialog.
                if (event.key === 'Escape') {
                  event.preventDefault();
                  event.stopPropagation();
                  event.nativeEvent.stopImmediatePropagation();
                  setNewName(null);
                }
              }}
            />
            <button
              type="submit"
              className="button button--flat button--primary"
              disabled={creating || !newName.trim()}
            >
              {t('buttons.create')}
            </button>
          </form>
        ))}
    </div>
  );
}
