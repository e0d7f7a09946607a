import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { ErrorScreen } from '../../components/ErrorScreen';
import { Spinner } from '../../components/Spinner';
import { UploadDropZone } from '../../components/upload/UploadDropZone';
import { usePageTitle } from '../../hooks/use-page-title';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { parentPath, resourcePathFromSplat } from '../../utils/paths';
import { Breadcrumbs } from './Breadcrumbs';
import { FileDetails } from './FileDetails';
import { Listing } from './Listing';
import { useResource } from './use-resource';

export function FilesPage() {
  const { t } = useTranslation();
  const path = resourcePathFromSplat(useParams()['*']);
  const { state, pending } = useResource(path);
  const setCurrentFolder = useFilesStore((store) => store.setCurrentFolder);
  const setLoading = useLayoutStore((store) => store.setLoading);

  const resource = state.status === 'ready' ? state.resource : null;
  usePageTitle(resource?.name || t('pageTitles.files'));

  useEffect(() => {
    if (!resource) return;
    setCurrentFolder(resource.isDir ? resource.path : parentPath(resource.path));
  }, [resource, setCurrentFolder]);
  useEffect(() => () => setCurrentFolder(null), [setCurrentFolder]);

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
      {resource &&
        (resource.isDir ? (
          <UploadDropZone base={resource.path} items={resource.items ?? []}>
            <Listing items={resource.items ?? []} />
          </UploadDropZone>
        ) : (
          <FileDetails file={resource} />
        ))}
    </div>
  );
}
