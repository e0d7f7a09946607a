import type { FileInfo, FileItem } from '@filebrowser/contract';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { bigPreviewURL, inlineURL, subtitleURL } from '../../../api/file-view';
import { downloadURL } from '../../../api/resources';
import { Icon } from '../../../components/Icon';
import { ShareButton } from '../../../components/share/ShareButton';
import { useUser } from '../../../hooks/use-user';
import { useLayoutStore } from '../../../stores/layout';
import { formatSize } from '../../../utils/format-size';
import { filesRoute, parentPath } from '../../../utils/paths';
import { fileIcon } from '../file-icon';
import { tooLargeToEdit } from '../text-limit';
import { ImageViewer } from './ImageViewer';
import { findNeighbours } from './neighbours';
import { useFolderItems } from './use-folder-items';
import '../../../styles/preview.css';
import { useWindowKeyDown } from '../../../hooks/use-window-key-down';

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Keys that belong to the element with the focus (seeking in a video, typing) are left alone. */
function ownsArrowKeys(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    target.closest('input, textarea, select, video, audio, [role="dialog"]') !== null
  );
}

function NoPreview({ file, canDownload }: { file: FileInfo; canDownload: boolean }) {
  const { t, i18n } = useTranslation();
  return (
    <div className="preview__message">
      <Icon name={fileIcon(file)} className="preview__big-icon" />
      <p className="preview__file-name">{file.name}</p>
      <p className="preview__muted">
        {formatSize(file.size, i18n.language)} ·{' '}
        {tooLargeToEdit(file) ? t('preview.tooLargeToEdit') : t('preview.noPreview')}
      </p>
      {canDownload && (
        <a className="button" href={downloadURL(file.path)} download={file.name}>
          <Icon name="file_download" />
          {t('buttons.download')}
        </a>
      )}
    </div>
  );
}

function MediaFailed() {
  const { t } = useTranslation();
  return (
    <div className="preview__message">
      <Icon name="error_outline" className="preview__big-icon" />
      <p>{t('preview.loadFailed')}</p>
    </div>
  );
}

interface MediaProps {
  file: FileInfo;
  onStep: (direction: 'previous' | 'next') => void;
  fullSize: boolean;
  onFullSizeChange: (fullSize: boolean) => void;
}

function Media({ file, onStep, fullSize, onFullSizeChange }: MediaProps) {
  const { t } = useTranslation();
  const [failed, setFailed] = useState(false);
  const src = inlineURL(file.path);
  if (failed) return <MediaFailed />;

  switch (file.type) {
    case 'image':
      return (
        <ImageViewer
          src={bigPreviewURL(file)}
          original={src}
          alt={file.name}
          onSwipe={onStep}
          fullSize={fullSize}
          onFullSizeChange={onFullSizeChange}
        />
      );
    case 'video':
      return (
        <video
          className="preview__video"
          src={src}
          controls
          autoPlay
          playsInline
          onError={() => setFailed(true)}
        >
          {(file.subtitles ?? []).map((subtitle, index) => (
            <track
              key={subtitle}
              kind="subtitles"
              src={subtitleURL(subtitle)}
              label={baseName(subtitle)}
              default={index === 0}
            />
          ))}
        </video>
      );
    case 'audio':
      return (
        <div className="preview__message">
          <Icon name="audiotrack" className="preview__big-icon" />
          <p className="preview__file-name">{file.name}</p>
          <audio className="preview__audio" src={src} controls autoPlay onError={() => setFailed(true)} />
        </div>
      );
    case 'pdf':
      // The browser's own PDF viewer; the page's CSP allows same-origin frames and no plugins.
      return (
        <iframe className="preview__frame" src={src} title={t('preview.pdfTitle', { name: file.name })} />
      );
    default:
      return null;
  }
}

/** A bar button that opens a prompt or toggles something. */
function BarButton({
  icon,
  label,
  onClick,
  pressed,
}: {
  icon: string;
  label: string;
  onClick: () => void;
  pressed?: boolean;
}) {
  return (
    <button
      type="button"
      className="icon-button preview__button"
      aria-label={label}
      title={label}
      aria-pressed={pressed}
      onClick={onClick}
    >
      <Icon name={icon} />
    </button>
  );
}

/**
 * A file that is not text, full screen: images (zoom and pan, full size or fitted), video with
 * its subtitles, audio, PDF; anything else gets its icon and a download button. The bar renames,
 * deletes, shows the info of, shares and downloads the file, as far as the user may. Left/right
 * step through the folder, Escape goes back to it, F2, Delete, I and F work as the bar's buttons.
 */
export function Preview({ file }: { file: FileInfo }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const user = useUser();
  const folder = parentPath(file.path);
  const items = useFolderItems(folder);
  const { previous, next } = useMemo(() => findNeighbours(items ?? [], file.path), [items, file.path]);
  const root = useRef<HTMLDivElement>(null);
  const canDownload = user.perm.download;
  const previewable = canDownload && ['image', 'video', 'audio', 'pdf'].includes(file.type);
  const sizable = previewable && file.type === 'image';
  const { rename: canRename, delete: canDelete } = user.perm;
  // Kept by path: the next file opens fitted.
  const [fullSizePath, setFullSizePath] = useState<string | null>(null);
  const fullSize = sizable && fullSizePath === file.path;
  const setFullSize = useCallback((on: boolean) => setFullSizePath(on ? file.path : null), [file.path]);

  const close = useCallback(() => void navigate(filesRoute(folder, true)), [navigate, folder]);
  // Steps replace the history entry: Back leaves the preview rather than replaying every step.
  const open = useCallback(
    (item: FileItem | null) => {
      if (item) void navigate(filesRoute(item.path, false), { replace: true });
    },
    [navigate],
  );
  const step = useCallback(
    (direction: 'previous' | 'next') => open(direction === 'previous' ? previous : next),
    [open, previous, next],
  );

  // The listing's own prompts, given the file; what follows them is the preview's.
  const rename = useCallback(() => {
    useLayoutStore.getState().openPrompt('rename', {
      item: file,
      onRenamed: (path) => void navigate(filesRoute(path, false), { replace: true }),
    });
  }, [file, navigate]);
  const remove = useCallback(() => {
    const after = next ?? previous;
    useLayoutStore.getState().openPrompt('delete', {
      items: [file],
      onDeleted: () => (after ? open(after) : close()),
    });
  }, [file, next, previous, open, close]);
  const info = useCallback(() => useLayoutStore.getState().openPrompt('info', { items: [file] }), [file]);

  useEffect(() => {
    root.current?.focus({ preventScroll: true });
  }, []);

  useWindowKeyDown((event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (useLayoutStore.getState().prompts.length > 0) return;
    if (event.key === 'Escape') close();
    else if (ownsArrowKeys(event.target)) return;
    else if (event.key === 'ArrowLeft') step('previous');
    else if (event.key === 'ArrowRight') step('next');
    else if (event.key === 'F2' && canRename) rename();
    else if (event.key === 'Delete' && canDelete) remove();
    else if (event.key === 'i' || event.key === 'I') info();
    else if ((event.key === 'f' || event.key === 'F') && sizable) setFullSize(!fullSize);
    else return;
    event.preventDefault();
  });

  // The next image is fetched ahead, so that stepping shows it at once.
  useEffect(() => {
    if (!canDownload || next?.type !== 'image') return;
    const image = new Image();
    image.src = bigPreviewURL(next);
  }, [next, canDownload]);

  return (
    <div ref={root} className="preview" tabIndex={-1} role="region" aria-label={file.name}>
      <div className="preview__bar">
        <button
          type="button"
          className="icon-button preview__button"
          aria-label={t('preview.close')}
          title={t('preview.close')}
          onClick={close}
        >
          <Icon name="close" />
        </button>
        <h2 className="preview__title" title={file.name}>
          {file.name}
        </h2>
        {sizable && (
          <BarButton
            icon={fullSize ? 'fullscreen_exit' : 'fullscreen'}
            label={t('preview.fullSize')}
            pressed={fullSize}
            onClick={() => setFullSize(!fullSize)}
          />
        )}
        {previewable && (
          <a
            className="icon-button preview__button"
            href={inlineURL(file.path)}
            target="_blank"
            rel="noopener noreferrer"
            aria-label={t('preview.openOriginal')}
            title={t('preview.openOriginal')}
          >
            <Icon name="open_in_new" />
          </a>
        )}
        <BarButton icon="info" label={t('buttons.info')} onClick={info} />
        <ShareButton path={file.path} className="icon-button preview__button" />
        {canRename && <BarButton icon="mode_edit" label={t('buttons.rename')} onClick={rename} />}
        {canDelete && <BarButton icon="delete" label={t('buttons.delete')} onClick={remove} />}
        {canDownload && (
          <a
            className="icon-button preview__button"
            href={downloadURL(file.path)}
            download={file.name}
            aria-label={t('buttons.download')}
            title={t('buttons.download')}
          >
            <Icon name="file_download" />
          </a>
        )}
      </div>

      <div className="preview__stage">
        {previewable ? (
          <Media
            key={file.path}
            file={file}
            onStep={step}
            fullSize={fullSize}
            onFullSizeChange={setFullSize}
          />
        ) : (
          <NoPreview file={file} canDownload={canDownload} />
        )}
      </div>

      {previous && (
        <button
          type="button"
          className="preview__nav preview__nav--previous"
          aria-label={t('preview.previous')}
          title={t('preview.previous')}
          onClick={() => open(previous)}
        >
          <Icon name="chevron_left" />
        </button>
      )}
      {next && (
        <button
          type="button"
          className="preview__nav preview__nav--next"
          aria-label={t('preview.next')}
          title={t('preview.next')}
          onClick={() => open(next)}
        >
          <Icon name="chevron_right" />
        </button>
      )}
    </div>
  );
}
