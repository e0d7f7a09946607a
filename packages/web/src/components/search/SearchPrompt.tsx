import type { SearchHit } from '@filebrowser/contract';
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { errorText } from '../../api/client';
import { searchFiles } from '../../api/search';
import { useFilesStore } from '../../stores/files';
import { filesRoute, joinPath } from '../../utils/paths';
import { Icon } from '../Icon';
import type { PromptProps } from '../prompts/types';
import { isNearBottom, SEARCH_PAGE_SIZE, shownCount } from './search-paging';
import { insertTypeFilter, isRunnable, QUICK_TYPES } from './search-query';
import '../../styles/search.css';

type SearchStatus = 'idle' | 'searching' | 'done' | 'error';

/**
 * The search overlay: Enter searches the folder, hits stream in and are drawn a page at a time.
 * A search that ran makes the listing reload once the overlay goes (however it goes), as the
 * original client did.
 */
export function SearchPrompt({ props, close }: PromptProps<'search'>) {
  const { t } = useTranslation();
  const titleId = useId();
  const invalidateListing = useFilesStore((store) => store.invalidateListing);
  const [query, setQuery] = useState('');
  const [status, setStatus] = useState<SearchStatus>('idle');
  const [error, setError] = useState('');
  // Hits live outside state: a search may find hundreds of thousands, and copying them into
  // a new array for every streamed batch would be quadratic. `total` tells React they grew.
  const hits = useRef<SearchHit[]>([]);
  const [total, setTotal] = useState(0);
  const [shown, setShown] = useState(SEARCH_PAGE_SIZE);
  const running = useRef<AbortController | null>(null);
  const searched = useRef(false);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);

  const stop = useCallback(() => {
    running.current?.abort();
    running.current = null;
  }, []);

  const reset = useCallback(() => {
    stop();
    hits.current = [];
    setTotal(0);
    setShown(SEARCH_PAGE_SIZE);
    setStatus('idle');
    setError('');
  }, [stop]);

  useEffect(
    () => () => {
      stop();
      if (searched.current) invalidateListing();
    },
    [stop, invalidateListing],
  );

  const run = async () => {
    if (!isRunnable(query)) return;
    reset();
    const controller = new AbortController();
    running.current = controller;
    searched.current = true;
    const found: SearchHit[] = [];
    hits.current = found;
    setStatus('searching');
    try {
      for await (const batch of searchFiles(props.dir, query, controller.signal)) {
        if (controller.signal.aborted) return;
        for (const hit of batch) found.push(hit);
        setTotal(found.length);
      }
      if (!controller.signal.aborted) setStatus('done');
    } catch (failure) {
      if (controller.signal.aborted) return;
      setStatus('error');
      setError(errorText(failure));
    } finally {
      if (running.current === controller) running.current = null;
    }
  };

  const changeQuery = (value: string) => {
    setQuery(value);
    if (status !== 'idle' || hits.current.length > 0) reset();
  };

  const addType = (type: string) => {
    changeQuery(insertTypeFilter(query, type));
    input.current?.focus();
  };

  const showMoreIfNearEnd = useCallback(() => {
    const box = list.current;
    if (box) setShown((current) => shownCount(current, hits.current.length, isNearBottom(box)));
  }, []);

  // Hits that arrive while the list already sits at its end (or does not fill the box yet)
  // must show without waiting for another scroll.
  useLayoutEffect(() => {
    if (total > shown) showMoreIfNearEnd();
  }, [total, shown, showMoreIfNearEnd]);

  const visible = hits.current.slice(0, shown);

  return (
    <div className="card prompt search" role="dialog" aria-modal="true" aria-labelledby={titleId}>
      <h2 id={titleId} className="sr-only">
        {t('search.title')}
      </h2>
      <form
        className="search__bar"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <Icon name="search" className="search__icon" />
        <input
          ref={input}
          className="search__input"
          type="search"
          aria-label={t('search.label')}
          placeholder={t('search.placeholder')}
          value={query}
          autoFocus
          autoComplete="off"
          spellCheck={false}
          enterKeyHint="search"
          onChange={(event) => changeQuery(event.target.value)}
        />
        <button type="button" className="icon-button" aria-label={t('search.close')} onClick={close}>
          <Icon name="close" />
        </button>
      </form>

      <div className="search__types" role="group" aria-label={t('search.types')}>
        {QUICK_TYPES.map((chip) => (
          <button key={chip.type} type="button" className="search__chip" onClick={() => addType(chip.type)}>
            <Icon name={chip.icon} />
            {t(chip.label)}
          </button>
        ))}
      </div>

      <div className="search__status" aria-live="polite">
        {status === 'idle' && <p className="search__hint">{t('search.hint')}</p>}
        {status === 'searching' && (
          <p className="search__hint search__hint--busy">
            <span className="search__spinner" aria-hidden="true" />
            {total > 0 ? t('search.searchingFound', { count: total }) : t('search.searching')}
          </p>
        )}
        {status === 'done' && (
          <p className="search__hint">
            {total === 0 ? t('search.noResults') : t('search.found', { count: total })}
          </p>
        )}
        {status === 'error' && (
          <p className="search__error" role="alert">
            {error}
          </p>
        )}
      </div>

      {visible.length > 0 && (
        <ul
          ref={list}
          className="search__results"
          aria-label={t('search.results')}
          onScroll={showMoreIfNearEnd}
        >
          {visible.map((hit) => (
            <li key={hit.path}>
              <Link to={filesRoute(joinPath(props.dir, hit.path), hit.dir)} className="search__result">
                <Icon
                  name={hit.dir ? 'folder' : 'insert_drive_file'}
                  className={hit.dir ? 'search__result-icon search__result-icon--dir' : 'search__result-icon'}
                />
                <span className="search__path">./{hit.path}</span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
