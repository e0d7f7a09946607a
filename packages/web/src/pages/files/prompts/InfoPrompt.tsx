import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm, type FileItem } from '@filebrowser/contract';
import { useEffect, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { downloadURL, fetchChecksum } from '../../../api/resources';
import { PromptCard } from '../../../components/prompts/PromptCard';
import type { PromptProps } from '../../../components/prompts/types';
import { useUser } from '../../../hooks/use-user';
import { showError } from '../../../stores/toasts';
import { formatAbsolute } from '../../../utils/format-date';
import { formatSize } from '../../../utils/format-size';

type Resolution = { width: number; height: number };

/**
 * The pixel size of an image. Listings of older servers carried it; otherwise the browser reads
 * it from the image itself (with the auth cookie).
 */
function useResolution(item: FileItem | undefined, enabled: boolean): Resolution | 'loading' | null {
  const [measured, setMeasured] = useState<Resolution | 'loading' | null>(null);
  const known = item?.resolution;
  const path = item?.type === 'image' && enabled && !known ? item.path : null;
  useEffect(() => {
    if (!path) return;
    setMeasured('loading');
    const image = new Image();
    image.onload = () => setMeasured({ width: image.naturalWidth, height: image.naturalHeight });
    image.onerror = () => setMeasured(null);
    image.src = downloadURL(path, { inline: true });
    return () => {
      image.onload = null;
      image.onerror = null;
      image.src = '';
    };
  }, [path]);
  return known ?? (path ? measured : null);
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="facts__row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Checksums({ path }: { path: string }) {
  const { t } = useTranslation();
  const [sums, setSums] = useState<Partial<Record<ChecksumAlgorithm, string | 'loading'>>>({});
  const show = async (algorithm: ChecksumAlgorithm) => {
    setSums((current) => ({ ...current, [algorithm]: 'loading' }));
    try {
      const sum = await fetchChecksum(path, algorithm);
      setSums((current) => ({ ...current, [algorithm]: sum }));
    } catch (error) {
      setSums((current) => ({ ...current, [algorithm]: undefined }));
      showError(error);
    }
  };
  return (
    <>
      {CHECKSUM_ALGORITHMS.map((algorithm) => {
        const value = sums[algorithm];
        return (
          <Fact key={algorithm} label={algorithm.toUpperCase()}>
            {value === undefined ? (
              <button
                type="button"
                className="link-button"
                aria-label={t('prompts.info.showChecksum', { algorithm: algorithm.toUpperCase() })}
                onClick={() => void show(algorithm)}
              >
                {t('prompts.info.show')}
              </button>
            ) : value === 'loading' ? (
              <span className="facts__muted">{t('common.loading')}</span>
            ) : (
              <code className="facts__checksum" data-algorithm={algorithm}>
                {value}
              </code>
            )}
          </Fact>
        );
      })}
    </>
  );
}

/** Facts about the selected entries, or about the folder on screen when nothing is selected. */
export function InfoPrompt({ props: { items, folder }, close }: PromptProps<'info'>) {
  const { t, i18n } = useTranslation();
  const user = useUser();
  const [single] = items.length === 1 ? items : [];
  const subject = items.length === 0 ? folder : single;
  const resolution = useResolution(single, user.perm.download);

  const date = (iso: string) => {
    const parsed = new Date(iso);
    return Number.isNaN(parsed.getTime()) ? iso : formatAbsolute(parsed, i18n.language);
  };
  const size = (bytes: number) =>
    `${formatSize(bytes, i18n.language)} (${t('files.bytes', { count: bytes })})`;
  const typeLabel = (entry: Pick<FileItem, 'isDir' | 'type'>) =>
    entry.isDir
      ? t('files.types.folder')
      : t(`files.types.${entry.type || 'blob'}`, { defaultValue: entry.type });

  let facts: ReactNode;
  if (subject) {
    facts = (
      <>
        <Fact label={t('prompts.info.name')}>{subject.name || t('files.home')}</Fact>
        <Fact label={t('prompts.info.path')}>
          <span className="facts__path">{subject.path}</span>
        </Fact>
        <Fact label={t('files.type')}>{typeLabel(subject)}</Fact>
        {!subject.isDir && <Fact label={t('files.size')}>{size(subject.size)}</Fact>}
        {subject === folder && (
          <>
            <Fact label={t('prompts.info.numberDirs')}>{folder.numDirs ?? 0}</Fact>
            <Fact label={t('prompts.info.numberFiles')}>{folder.numFiles ?? 0}</Fact>
          </>
        )}
        {resolution && (
          <Fact label={t('prompts.info.resolution')}>
            {resolution === 'loading'
              ? t('common.loading')
              : t('prompts.info.pixels', { width: resolution.width, height: resolution.height })}
          </Fact>
        )}
        <Fact label={t('files.lastModified')}>
          <time dateTime={subject.modified}>{date(subject.modified)}</time>
        </Fact>
        {!subject.isDir && user.perm.download && <Checksums path={subject.path} />}
      </>
    );
  } else {
    const files = items.filter((item) => !item.isDir);
    facts = (
      <>
        <Fact label={t('prompts.info.selection')}>{t('files.selected', { count: items.length })}</Fact>
        <Fact label={t('prompts.info.numberDirs')}>{items.length - files.length}</Fact>
        <Fact label={t('prompts.info.numberFiles')}>{files.length}</Fact>
        <Fact label={t('prompts.info.filesSize')}>
          {size(files.reduce((sum, item) => sum + item.size, 0))}
        </Fact>
      </>
    );
  }

  return (
    <PromptCard
      title={t('prompts.info.title')}
      actions={
        <button type="button" className="button button--flat button--primary" onClick={close} autoFocus>
          {t('buttons.ok')}
        </button>
      }
    >
      <dl className="facts">{facts}</dl>
    </PromptCard>
  );
}
