import type { FileInfo } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { downloadURL } from '../../api/resources';
import { Icon } from '../../components/Icon';
import { useUser } from '../../hooks/use-user';
import { formatAbsolute } from '../../utils/format-date';
import { formatSize } from '../../utils/format-size';
import { fileIcon } from './file-icon';

/** What the file browser shows for a single file until it gets a preview and an editor. */
export function FileDetails({ file }: { file: FileInfo }) {
  const { t, i18n } = useTranslation();
  const user = useUser();
  const modified = new Date(file.modified);
  return (
    <section className="card file-details" aria-labelledby="file-details-name">
      <div className="file-details__head">
        <Icon name={fileIcon(file)} className="file-details__icon" />
        <h2 id="file-details-name" className="file-details__name">
          {file.name}
        </h2>
      </div>
      <dl className="file-details__facts">
        <div>
          <dt>{t('files.size')}</dt>
          <dd>
            {formatSize(file.size, i18n.language)} ({t('files.bytes', { count: file.size })})
          </dd>
        </div>
        <div>
          <dt>{t('files.lastModified')}</dt>
          <dd>
            <time dateTime={file.modified}>
              {Number.isNaN(modified.getTime()) ? file.modified : formatAbsolute(modified, i18n.language)}
            </time>
          </dd>
        </div>
        <div>
          <dt>{t('files.type')}</dt>
          <dd>{file.type || '—'}</dd>
        </div>
      </dl>
      {user.perm.download && (
        <div className="file-details__actions">
          <a className="button" href={downloadURL(file.path)} download={file.name}>
            <Icon name="file_download" />
            {t('buttons.download')}
          </a>
        </div>
      )}
    </section>
  );
}
