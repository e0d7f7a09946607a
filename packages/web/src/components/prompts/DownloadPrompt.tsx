import { ARCHIVE_FORMATS, type ArchiveFormat } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { startup } from '../../startup';
import { PromptCard } from './PromptCard';
import type { PromptProps } from './types';

/** What File Browser's client offered when the server does not say what it can write. */
const FALLBACK_FORMATS: ArchiveFormat[] = ['zip', 'tar', 'targz', 'tarbz2', 'tarxz', 'tarlz4', 'tarsz'];

/** The archive formats to offer: those the server advertises at start-up, in the contract's order. */
export function offeredArchiveFormats(advertised: readonly string[] | undefined = startup.ArchiveFormats) {
  if (!advertised) return FALLBACK_FORMATS;
  return (Object.keys(ARCHIVE_FORMATS) as ArchiveFormat[]).filter((f) => advertised.includes(f));
}

/** Asks which archive format a download of several items (or a folder) should have. */
export function DownloadPrompt({ props, close }: PromptProps<'download'>) {
  const { t } = useTranslation();
  return (
    <PromptCard
      title={t('prompts.download.title')}
      actions={
        <button type="button" className="button button--flat" onClick={close}>
          {t('buttons.cancel')}
        </button>
      }
    >
      <p>{t('prompts.download.message')}</p>
      <div className="download-formats">
        {offeredArchiveFormats().map((format, index) => (
          <button
            key={format}
            type="button"
            className="button button--block"
            autoFocus={index === 0}
            onClick={() => {
              close();
              props.onChoose(format);
            }}
          >
            {ARCHIVE_FORMATS[format].slice(1)}
          </button>
        ))}
      </div>
    </PromptCard>
  );
}
