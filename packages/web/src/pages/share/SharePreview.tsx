import type { FileItem } from '@filebrowser/contract';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon';
import { fileIcon } from '../files/file-icon';

interface SharePreviewProps {
  item: FileItem;
  /** Inline address of the item's content. */
  inlineURL: string;
}

/** A look at one selected item: the picture, a player, or the icon of its kind. */
export function SharePreview({ item, inlineURL }: SharePreviewProps) {
  const { t } = useTranslation();
  const audio = useRef<HTMLAudioElement>(null);
  const [playing, setPlaying] = useState(false);

  if (!item.isDir && item.type === 'image') {
    return <img className="share-preview__media" src={inlineURL} alt={item.name} />;
  }
  if (!item.isDir && item.type === 'video') {
    return (
      <video className="share-preview__media" src={inlineURL} controls preload="metadata">
        <track kind="captions" />
      </video>
    );
  }
  if (!item.isDir && item.type === 'audio') {
    const toggle = () => {
      const element = audio.current;
      if (!element) return;
      if (element.paused) void element.play().catch(() => setPlaying(false));
      else element.pause();
    };
    return (
      <div className="share-preview__audio">
        <Icon name="audiotrack" className="share-preview__icon" />
        <button
          type="button"
          className="icon-button"
          aria-label={playing ? t('share.pause') : t('share.play')}
          onClick={toggle}
        >
          <Icon name={playing ? 'pause' : 'play_arrow'} />
        </button>
        <audio
          ref={audio}
          src={inlineURL}
          preload="metadata"
          onPlay={() => setPlaying(true)}
          onPause={() => setPlaying(false)}
          onEnded={() => setPlaying(false)}
        />
      </div>
    );
  }
  return <Icon name={fileIcon(item)} className="share-preview__icon" />;
}
