import type { FileItem } from '@filebrowser/contract';
import { useState } from 'react';
import { thumbnailURL } from '../../../api/resources';
import { Icon } from '../../../components/Icon';

/**
 * An image's thumbnail. Only entries in view are rendered (the listing is virtualised) and the
 * browser defers off-screen images as well, so a folder of photos loads as it scrolls. Until the
 * picture arrives a neutral placeholder holds its place; an image the server cannot shrink falls
 * back to the icon.
 */
export function Thumbnail({ item }: { item: Pick<FileItem, 'path' | 'modified' | 'name'> }) {
  const [failed, setFailed] = useState(false);
  const [loaded, setLoaded] = useState(false);
  if (failed) return <Icon name="image" className="item__icon item__icon--image" />;
  return (
    <span className="item__thumb-frame">
      {!loaded && <Icon name="image" className="item__icon item__thumb-placeholder" />}
      <img
        className={loaded ? 'item__thumb item__thumb--loaded' : 'item__thumb'}
        src={thumbnailURL(item)}
        alt=""
        loading="lazy"
        decoding="async"
        draggable={false}
        onLoad={() => setLoaded(true)}
        onError={() => setFailed(true)}
      />
    </span>
  );
}
