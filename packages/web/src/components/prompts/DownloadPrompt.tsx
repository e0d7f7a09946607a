import { ARCHIVE_FORMATS, type ArchiveFormat } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { PromptCard } from './PromptCard';
import type { PromptProps } from './types';
import { startup } from '../../startup';

const FORMATS = Object.keys(ARCHIVE_FORMATS) as ArchiveFormat[];

/** Whether this server can write a format (a compressor may be missing; older servers do not say). */
function available(format: ArchiveFormat): boolean {
  return startup.ArchiveFormats === undefined || startup.ArchiveFormats.includes(format);
}

/** The archive format of a folder or multi-entry download; one click downloads. */
export function DownloadPrompt({ props: { onChoose }, close }: PromptProps<'download'>) {
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
      <div className="formats">
        {FORMATS.map((format, index) => {
          const usable = available(format);
          return (
            <button
              key={format}
              type="button"
              className="button button--flat format-button"
              disabled={!usable}
              title={usable ? undefined : t('prompts.download.unavailable')}
              autoFocus={index === 0}
              onClick={() => {
                close();
                onChoose(format);
              }}
            >
              {ARCHIVE_FORMATS[format].slice(1)}
            </button>
          );
        })}
      </div>
    </PromptCard>
  );
}
