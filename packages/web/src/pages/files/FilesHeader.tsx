import { useEffect, useRef } from 'react';
import { createPortal } from 'react-dom';
import { useTranslation } from 'react-i18next';
import { HeaderActions } from '../../components/layout/HeaderActions';
import { SearchButton } from '../../components/search/SearchButton';
import { Icon } from '../../components/Icon';
import { useIsNarrow } from '../../hooks/use-media-query';
import { useFilesStore } from '../../stores/files';
import { selectCurrentPrompt, useLayoutStore } from '../../stores/layout';
import { useFileActions, type FileAction } from './file-actions';

export function ActionButton({ action }: { action: FileAction }) {
  return (
    <button
      type="button"
      className={action.pressed ? 'icon-button action action--pressed' : 'icon-button action'}
      // The counter is visible text, so it is part of the name too (WCAG 2.5.3, label in name).
      aria-label={action.counter === undefined ? action.label : `${action.label} ${action.counter}`}
      title={action.label}
      aria-pressed={action.pressed}
      data-action={action.id}
      onClick={action.run}
    >
      <Icon name={action.icon} />
      {action.counter !== undefined && <span className="action__counter">{action.counter}</span>}
    </button>
  );
}

/** The 'more' dropdown of narrow screens; an open 'more' prompt gives it the overlay and Escape. */
function MoreMenu({ actions }: { actions: FileAction[] }) {
  const { t } = useTranslation();
  const closePrompt = useLayoutStore((state) => state.closePrompt);
  const menu = useRef<HTMLDivElement | null>(null);
  useEffect(() => {
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, []);
  return createPortal(
    // Drawn over the page from the end of <body>, so a named section makes it a landmark: no
    // content lies outside one.
    <section aria-label={t('header.moreActions')}>
      <div ref={menu} className="dropdown" role="menu" aria-label={t('header.moreActions')}>
        {actions.map((action) => (
          <button
            key={action.id}
            type="button"
            role={action.pressed === undefined ? 'menuitem' : 'menuitemcheckbox'}
            aria-checked={action.pressed}
            className={action.pressed ? 'dropdown__item dropdown__item--on' : 'dropdown__item'}
            data-action={action.id}
            onClick={() => {
              // Closed first: an action that opens a prompt must find the stack empty to show it.
              closePrompt();
              action.run();
            }}
          >
            <Icon name={action.icon} />
            <span>{action.label}</span>
            {action.counter !== undefined && <span className="action__counter">{action.counter}</span>}
          </button>
        ))}
      </div>
    </section>,
    document.body,
  );
}

/**
 * The listing's actions in the header. Wide screens show them all; at 736 px and less the
 * selection actions go to the bar beneath the header and the rest into the 'more' menu.
 */
export function FilesHeader() {
  const { t } = useTranslation();
  const narrow = useIsNarrow();
  const { selection, general } = useFileActions();
  const count = useFilesStore((state) => state.selection.paths.size);
  const moreOpen = useLayoutStore((state) => selectCurrentPrompt(state)?.name === 'more');
  const openPrompt = useLayoutStore((state) => state.openPrompt);

  return (
    <HeaderActions>
      <SearchButton className="icon-button action" />
      {narrow ? (
        <>
          <button
            type="button"
            className="icon-button action"
            aria-label={t('header.moreActions')}
            title={t('header.moreActions')}
            aria-haspopup="menu"
            aria-expanded={moreOpen}
            onClick={() => openPrompt('more', {})}
          >
            <Icon name="more_vert" />
          </button>
          {moreOpen && <MoreMenu actions={general} />}
        </>
      ) : (
        <div className="actions" role="toolbar" aria-label={t('header.actions')}>
          {count > 0 && (
            <span className="actions__count" aria-live="polite">
              {t('files.selected', { count })}
            </span>
          )}
          {selection.map((action) => (
            <ActionButton key={action.id} action={action} />
          ))}
          {selection.length > 0 && <span className="actions__divider" aria-hidden="true" />}
          {general.map((action) => (
            <ActionButton key={action.id} action={action} />
          ))}
        </div>
      )}
    </HeaderActions>
  );
}

/** Narrow screens: what acts on the selection, in a bar beneath the header while something is selected. */
export function SelectionBar() {
  const { t } = useTranslation();
  const { selection } = useFileActions();
  const count = useFilesStore((state) => state.selection.paths.size);
  const clearSelection = useFilesStore((state) => state.clearSelection);
  if (count === 0) return null;
  return (
    <div className="selection-bar" role="toolbar" aria-label={t('files.selectionActions')}>
      <button
        type="button"
        className="icon-button"
        aria-label={t('files.clearSelection')}
        title={t('files.clearSelection')}
        onClick={clearSelection}
      >
        <Icon name="close" />
      </button>
      <span className="selection-bar__count" aria-live="polite">
        {t('files.selected', { count })}
      </span>
      <div className="selection-bar__actions">
        {selection.map((action) => (
          <ActionButton key={action.id} action={action} />
        ))}
      </div>
    </div>
  );
}
