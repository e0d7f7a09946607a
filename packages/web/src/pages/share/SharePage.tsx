import type { FileInfo, FileItem } from '@filebrowser/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { absoluteURL, publicDownloadURL } from '../../api/shares';
import { ErrorScreen } from '../../components/ErrorScreen';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/Spinner';
import { useCopyLink } from '../../hooks/use-copy-link';
import { usePageTitle } from '../../hooks/use-page-title';
import { useLayoutStore } from '../../stores/layout';
import { buildBreadcrumbs, TRIMMED_CRUMB, trimBreadcrumbs } from '../../utils/breadcrumbs';
import { PasswordCard } from './PasswordCard';
import { parseShareSplat, shareRoute } from './share-route';
import { ShareInfo } from './ShareInfo';
import { ShareListing } from './ShareListing';
import { SharePreview } from './SharePreview';
import { usePublicShare } from './use-public-share';

/** Starts a download without leaving the page (the server answers with an attachment). */
function startDownload(url: string, name?: string): void {
  const anchor = document.createElement('a');
  anchor.href = url;
  if (name) anchor.download = name;
  anchor.rel = 'noreferrer';
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
}

function ShareBreadcrumbs({ hash, path, rootName }: { hash: string; path: string; rootName: string }) {
  const { t } = useTranslation();
  const crumbs = trimBreadcrumbs(buildBreadcrumbs(path, true));
  return (
    <nav className="breadcrumbs" aria-label={t('files.breadcrumbs')}>
      <ol>
        <li>
          <Link to={shareRoute(hash, '/', true)} aria-current={crumbs.length === 0 ? 'page' : undefined}>
            <Icon name="folder_shared" />
            <span className="share-breadcrumbs__root">{rootName}</span>
          </Link>
        </li>
        {crumbs.map((crumb, index) => (
          <li key={crumb.path}>
            <Icon name="chevron_right" className="breadcrumbs__separator" />
            <Link
              to={shareRoute(hash, crumb.path, true)}
              aria-current={index === crumbs.length - 1 ? 'page' : undefined}
              title={crumb.name === TRIMMED_CRUMB ? t('files.parentFolders') : undefined}
            >
              {crumb.name}
            </Link>
          </li>
        ))}
      </ol>
    </nav>
  );
}

interface SharedFolderProps {
  hash: string;
  info: FileInfo;
  token?: string;
  rootName: string;
}

/** A shared folder (or a folder below it): the info box, the listing and the selection's actions. */
function SharedFolder({ hash, info, token, rootName }: SharedFolderProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const copyLink = useCopyLink();
  const items = info.items ?? [];
  const [selection, setSelection] = useState<{ folder: string; paths: string[] }>({
    folder: info.path,
    paths: [],
  });
  // A new folder starts without a selection.
  const selectedPaths = selection.folder === info.path ? selection.paths : [];
  const selectedItems = items.filter((item) => selectedPaths.includes(item.path));
  const single = selectedItems.length === 1 ? selectedItems[0] : undefined;

  const select = (item: FileItem, add: boolean) => {
    const current = selectedPaths;
    const next = add
      ? current.includes(item.path)
        ? current.filter((p) => p !== item.path)
        : [...current, item.path]
      : current.length === 1 && current[0] === item.path
        ? []
        : [item.path];
    setSelection({ folder: info.path, paths: next });
  };

  const open = (item: FileItem) => {
    if (item.isDir) void navigate(shareRoute(hash, item.path, true));
  };

  const archive = (files: string[]) =>
    openPrompt('download', {
      onChoose: (algo) =>
        startDownload(
          files.length > 0
            ? publicDownloadURL(hash, '/', { token, algo, files })
            : publicDownloadURL(hash, info.path, { token, algo }),
        ),
    });

  const downloadSelection = () => {
    if (single && !single.isDir) {
      startDownload(publicDownloadURL(hash, single.path, { token }), single.name);
      return;
    }
    archive(selectedItems.map((item) => item.path));
  };

  return (
    <div className="share-page__body">
      <div className="share-page__side">
        <ShareInfo
          info={info}
          fallbackName={rootName}
          downloadURL={publicDownloadURL(hash, info.path, { token })}
          onDownloadFolder={() => archive([])}
        />
        {selectedItems.length > 0 && (
          <section className="card share-selection" aria-labelledby="share-selection-title">
            <h2 id="share-selection-title" className="card__title">
              {single ? single.name : t('share.selected', { count: selectedItems.length })}
            </h2>
            {single && (
              <div className="share-preview">
                <SharePreview
                  item={single}
                  inlineURL={publicDownloadURL(hash, single.path, { token, inline: true })}
                />
              </div>
            )}
            <div className="share-info__actions">
              <button type="button" className="button" onClick={downloadSelection}>
                <Icon name="file_download" />
                {t('buttons.download')}
              </button>
              {single && !single.isDir && (
                <button
                  type="button"
                  className="button button--flat"
                  onClick={() => void copyLink(absoluteURL(publicDownloadURL(hash, single.path, { token })))}
                >
                  <Icon name="content_paste" />
                  {t('share.copyDownloadLinkShort')}
                </button>
              )}
              {single?.isDir && (
                <Link className="button button--flat" to={shareRoute(hash, single.path, true)}>
                  <Icon name="folder_open" />
                  {t('share.open')}
                </Link>
              )}
            </div>
          </section>
        )}
      </div>
      <div className="share-page__main">
        <ShareListing items={items} selected={new Set(selectedPaths)} onSelect={select} onOpen={open} />
      </div>
    </div>
  );
}

/** The public page of a share link: /share/{hash}/{path below the share}. */
export function SharePage() {
  const { t } = useTranslation();
  const { hash, path } = parseShareSplat(useParams()['*']);
  const { state, submitPassword } = usePublicShare(hash, path);
  usePageTitle(state.status === 'ready' && state.info.name ? state.info.name : t('share.pageTitle'));

  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;
  if (state.status === 'password') {
    return (
      <div className="share-page share-page--centred">
        <PasswordCard
          wrong={state.wrong}
          tooMany={state.tooMany}
          retryAfter={state.retryAfter}
          onSubmit={submitPassword}
        />
      </div>
    );
  }

  const { info, token } = state;
  const rootName = info.name || t('share.root');
  return (
    <div className="share-page">
      {info.isDir ? (
        <>
          <ShareBreadcrumbs hash={hash} path={info.path} rootName={rootName} />
          <SharedFolder hash={hash} info={info} token={token} rootName={rootName} />
        </>
      ) : (
        <div className="share-page__body">
          <div className="share-page__side">
            <ShareInfo
              info={info}
              fallbackName={rootName}
              // A file link's path is "": the name after the hash only names the saved file.
              downloadURL={publicDownloadURL(hash, info.path || `/${info.name}`, { token })}
              onDownloadFolder={() => undefined}
            />
          </div>
          <div className="share-page__main share-preview share-preview--large">
            <SharePreview
              item={info}
              inlineURL={publicDownloadURL(hash, info.path || `/${info.name}`, { token, inline: true })}
            />
          </div>
        </div>
      )}
    </div>
  );
}
