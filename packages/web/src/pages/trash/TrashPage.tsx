import type { TrashItem } from '@filebrowser/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../api/client';
import { deleteTrashItem, emptyTrash, listTrash, restoreTrashItem, type RestoreMode } from '../../api/trash';
import { ErrorScreen } from '../../components/ErrorScreen';
import { Icon } from '../../components/Icon';
import { EmptyState } from '../../components/EmptyState';
import { RelativeTime } from '../../components/RelativeTime';
import { Spinner } from '../../components/Spinner';
import { useLoad } from '../../hooks/use-load';
import { usePageTitle } from '../../hooks/use-page-title';
import { useUser } from '../../hooks/use-user';
import { useLayoutStore, type ClashChoice } from '../../stores/layout';
import { showError, showSuccess } from '../../stores/toasts';
import { formatSize } from '../../utils/format-size';

/** Asks what to do about a name taken at the original place; null when the user cancels. */
function askClash(name: string): Promise<ClashChoice | null> {
  return new Promise((resolve) => {
    let chosen = false;
    useLayoutStore.getState().openPrompt(
      'replace-rename',
      {
        clashes: [name],
        onChoose: (choice) => {
          chosen = true;
          resolve(choice);
        },
      },
      // The prompt closes before it reports the choice: only a close with no choice after it cancels.
      () =>
        queueMicrotask(() => {
          if (!chosen) resolve(null);
        }),
    );
  });
}

/**
 * Restores one item, asking on a taken name; answers how it left the trash (`override`: over the
 * entry that took its name), or null when the user cancelled and it stays.
 */
async function restoreOne(
  item: TrashItem,
  onRestored: (path: string, recreated: boolean) => void,
): Promise<RestoreMode | null> {
  let mode: RestoreMode = 'ask';
  for (;;) {
    try {
      const result = await restoreTrashItem(item.id, mode);
      onRestored(result.path, result.recreatedFolders);
      return mode;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409 || mode !== 'ask') throw error;
      const choice = await askClash(item.name);
      if (choice === null) return null;
      mode = choice === 'overwrite' ? 'override' : 'rename';
    }
  }
}

/** The signed-in user's trash: what they deleted, to restore or delete forever. */
export function TrashPage() {
  const { t, i18n } = useTranslation();
  const user = useUser();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const { state, setData } = useLoad(listTrash, 'trash');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);
  usePageTitle(t('trash.title'));

  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;

  const items = state.data;
  const chosen = items.filter((item) => selected.has(item.id));
  const allSelected = items.length > 0 && chosen.length === items.length;
  const drop = (ids: readonly string[]) => {
    setData((rows) => rows.filter((row) => !ids.includes(row.id)));
    setSelected((current) => new Set([...current].filter((id) => !ids.includes(id))));
  };
  const toggle = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  const restore = async () => {
    setBusy(true);
    let replaced = false;
    // One refusal (a rule, a permission) says why and leaves the others to go on.
    for (const item of chosen) {
      try {
        const mode = await restoreOne(item, (path, recreated) =>
          showSuccess(t(recreated ? 'trash.restoredRecreated' : 'trash.restored', { path })),
        );
        if (mode !== null) drop([item.id]);
        if (mode === 'override') replaced = true;
      } catch (error) {
        showError(error);
      }
    }
    // What an overwrite replaced went into the trash (while it is on): listed, to restore in turn.
    if (replaced) {
      try {
        setData(await listTrash());
      } catch (error) {
        showError(error);
      }
    }
    setBusy(false);
  };

  const askDeleteForever = () =>
    openPrompt('confirm', {
      title: t('trash.deleteForeverTitle'),
      message: t('trash.deleteForeverMessage', { count: chosen.length }),
      confirmLabel: t('trash.deleteForever'),
      onConfirm: async () => {
        const gone: string[] = [];
        try {
          for (const item of chosen) {
            await deleteTrashItem(item.id);
            gone.push(item.id);
          }
        } finally {
          drop(gone);
        }
        showSuccess(t('trash.deletedForever'));
      },
    });

  const askEmpty = () =>
    openPrompt('confirm', {
      title: t('trash.emptyTitle'),
      message: t('trash.emptyMessage'),
      confirmLabel: t('trash.emptyTrash'),
      onConfirm: async () => {
        await emptyTrash();
        drop(items.map((item) => item.id));
        showSuccess(t('trash.emptied'));
      },
    });

  return (
    <section className="card card--wide trash" aria-labelledby="trash-title">
      <div className="card__header">
        <h2 id="trash-title" className="card__title">
          {t('trash.title')}
        </h2>
        <div className="trash__actions">
          {user.perm.create && (
            <button
              type="button"
              className="button button--flat"
              disabled={busy || chosen.length === 0}
              onClick={() => void restore()}
            >
              <Icon name="restore_from_trash" />
              {t('trash.restore')}
            </button>
          )}
          {user.perm.delete && (
            <>
              <button
                type="button"
                className="button button--flat button--danger"
                disabled={busy || chosen.length === 0}
                onClick={askDeleteForever}
              >
                <Icon name="delete_forever" />
                {t('trash.deleteForever')}
              </button>
              <button
                type="button"
                className="button button--flat button--danger"
                disabled={busy || items.length === 0}
                onClick={askEmpty}
              >
                <Icon name="delete_sweep" />
                {t('trash.emptyTrash')}
              </button>
            </>
          )}
        </div>
      </div>
      {items.length === 0 ? (
        <EmptyState icon="delete_outline" text={t('trash.nothing')} />
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label={t('trash.selectAll')}
                    checked={allSelected}
                    onChange={(event) =>
                      setSelected(new Set(event.target.checked ? items.map((item) => item.id) : []))
                    }
                  />
                </th>
                <th scope="col">{t('trash.name')}</th>
                <th scope="col">{t('trash.folder')}</th>
                <th scope="col">{t('trash.size')}</th>
                <th scope="col">{t('trash.deletedAt')}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((item) => {
                const deleted = new Date(item.deletedAt);
                return (
                  <tr key={item.id}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={t('trash.select', { name: item.name })}
                        checked={selected.has(item.id)}
                        onChange={(event) => toggle(item.id, event.target.checked)}
                      />
                    </td>
                    <td className="table__path">
                      <Icon name={item.isDir ? 'folder' : 'insert_drive_file'} /> {item.name}
                    </td>
                    <td className="table__path">{item.folder}</td>
                    <td>{formatSize(item.size, i18n.language)}</td>
                    <td>
                      <RelativeTime date={deleted} locale={i18n.language} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
