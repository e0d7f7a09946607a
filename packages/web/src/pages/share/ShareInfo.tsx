import type { FileInfo } from '@filebrowser/contract';
import { QRCodeSVG } from 'qrcode.react';
import { useTranslation } from 'react-i18next';
import { absoluteURL } from '../../api/shares';
import { Icon } from '../../components/Icon';
import { formatAbsolute } from '../../utils/format-date';
import { formatSize } from '../../utils/format-size';
import { fileIcon } from '../files/file-icon';

interface ShareInfoProps {
  info: FileInfo;
  /** The name to show when the shared folder is a user's whole scope (its name is then ""). */
  fallbackName: string;
  /** Where the shared file, or an archive of the folder on screen, downloads from. */
  downloadURL: string;
  /** Downloads the folder on screen (asks for a format); files use the link directly. */
  onDownloadFolder: () => void;
}

/** The box about what the link shares: name, date, size, download buttons and a QR code. */
export function ShareInfo({ info, fallbackName, downloadURL, onDownloadFolder }: ShareInfoProps) {
  const { t, i18n } = useTranslation();
  const modified = new Date(info.modified);
  const count = (info.numDirs ?? 0) + (info.numFiles ?? 0);
  const name = info.name || fallbackName;
  return (
    <section className="card share-info" aria-labelledby="share-info-name">
      <div className="file-details__head">
        <Icon name={fileIcon(info)} className="file-details__icon" />
        <h2 id="share-info-name" className="file-details__name">
          {name}
        </h2>
      </div>
      <dl className="file-details__facts">
        {!info.isDir && (
          <div>
            <dt>{t('files.lastModified')}</dt>
            <dd>
              <time dateTime={info.modified}>
                {Number.isNaN(modified.getTime()) ? info.modified : formatAbsolute(modified, i18n.language)}
              </time>
            </dd>
          </div>
        )}
        <div>
          <dt>{t('files.size')}</dt>
          <dd>{info.isDir ? t('share.itemCount', { count }) : formatSize(info.size, i18n.language)}</dd>
        </div>
      </dl>
      <div className="share-info__actions">
        {info.isDir ? (
          <button type="button" className="button" onClick={onDownloadFolder}>
            <Icon name="file_download" />
            {t('buttons.download')}
          </button>
        ) : (
          <>
            <a className="button" href={downloadURL} download={name}>
              <Icon name="file_download" />
              {t('buttons.download')}
            </a>
            <a
              className="button button--flat"
              href={`${downloadURL}${downloadURL.includes('?') ? '&' : '?'}inline=true`}
              target="_blank"
              rel="noreferrer"
            >
              <Icon name="open_in_new" />
              {t('share.openInNewTab')}
            </a>
          </>
        )}
      </div>
      <figure className="share-info__qr" aria-label={t('share.qrCode')}>
        <QRCodeSVG
          value={absoluteURL(downloadURL)}
          level="M"
          size={info.isDir ? 100 : 200}
          marginSize={2}
          title={t('share.qrCode')}
        />
      </figure>
    </section>
  );
}
