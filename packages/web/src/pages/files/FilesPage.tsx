import type { FileInfo } from '@filebrowser/contract';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { ErrorScreen } from '../../components/ErrorScreen';
import { ShellPanel } from '../../components/shell/ShellPanel';
import { Spinner } from '../../components/Spinner';
import { UploadDropZone } from '../../components/upload/UploadDropZone';
import { useIsNarrow } from '../../hooks/use-media-query';
import { usePageTitle } from '../../hooks/use-page-title';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { parentPath, resourcePathFromSplat } from '../../utils/paths';
import { pruneSelection } from '../../utils/selection';
import { Breadcrumbs } from './Breadcrumbs';
import { FilesHeader, SelectionBar } from './FilesHeader';
import { FileView } from './FileView';
import { Listing } from './listing/Listing';
import { useListingShortcuts } from './use-listing-shortcuts';
import { useResource } from './use-resource';

/** The folder on screen: its header actions, keyboard, selection bar and entries. */
function FolderView({ folder }: { folder: FileInfo }) {
  const narrow = useIsNarrow();
  useListingShortcuts();
  return (
    <>
      <FilesHeader />
      {narrow && <SelectionBar />}
      <UploadDropZone base={folder.path} items={folder.items ?? []}>
        <Listing folder={folder} />
      </UploadDropZone>
    </>
  );
}

export function FilesPage() {
  const { t } = useTranslation();
  const path = resourcePathFromSplat(useParams()['*']);
  const { state, pending } = useResource(path);
  const setCurrentFolder = useFilesStore((store) => store.setCurrentFolder);
  const setListing = useFilesStore((store) => store.setListing);
  const setLoading = useLayoutStore((store) => store.setLoading);

  const resource = state.status === 'ready' ? state.resource : null;
  usePageTitle(resource?.name || t('pageTitles.files'));

  // Another folder starts with nothing selected and "select multiple" off; until it arrives no
  // listing is on screen, so a shortcut cannot act on the folder being left.
  useEffect(() => {
    const { clearSelection, setMultiple, setListing: forget } = useFilesStore.getState();
    clearSelection();
    setMultiple(false);
    forget(null);
  }, [path]);

  useEffect(() => {
    if (!resource) return;
    setCurrentFolder(resource.isDir ? resource.path : parentPath(resource.path));
    setListing(resource.isDir ? resource : null);
    if (resource.isDir) {
      // A reload keeps the selection of what is still there.
      const { selection, setSelection } = useFilesStore.getState();
      setSelection(
        pruneSelection(
          selection,
          (resource.items ?? []).map((item) => item.path),
        ),
      );
    }
  }, [resource, setCurrentFolder, setListing]);
  useEffect(
    () => () => {
      setCurrentFolder(null);
      setListing(null);
    },
    [setCurrentFolder, setListing],
  );

  useEffect(() => {
    setLoading(pending);
    return () => setLoading(false);
  }, [pending, setLoading]);

  return (
    <div className="files">
      <Breadcrumbs path={path} isDir={resource ? resource.isDir : path.endsWith('/')} />
      {state.status === 'loading' && <Spinner />}
      {state.status === 'error' && <ErrorScreen status={state.code} detail={state.message} />}
      {state.status === 'mismatch' && <ErrorScreen status={500} detail={t('errors.dataMismatch')} />}
      {resource && (resource.isDir ? <FolderView folder={resource} /> : <FileView file={resource} />)}
      <ShellPanel />
    </div>
  );
}
