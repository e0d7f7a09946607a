import type { FileItem } from '@filebrowser/contract';
import { useEffect, useState } from 'react';
import { fetchResource } from '../../../api/resources';
import { useFilesStore } from '../../../stores/files';

interface CachedFolder {
  path: string;
  version: number;
  items: FileItem[];
}

// Stepping through a folder opens one file after another, each on its own route: the folder's
// listing is kept between them so that it is fetched once, not once per step.
let cached: CachedFolder | null = null;

/**
 * The entries of `folder` in the listing's order, for previous/next; null until they are known
 * (and when they cannot be: stepping is then simply not offered).
 */
export function useFolderItems(folder: string): FileItem[] | null {
  const version = useFilesStore((store) => store.listingVersion);
  const fresh = cached && cached.path === folder && cached.version === version ? cached.items : null;
  const [items, setItems] = useState<{ folder: string; items: FileItem[] } | null>(null);

  useEffect(() => {
    if (fresh) return;
    const controller = new AbortController();
    fetchResource(folder, controller.signal).then(
      (listing) => {
        const entries = listing.items ?? [];
        cached = { path: folder, version, items: entries };
        setItems({ folder, items: entries });
      },
      () => undefined,
    );
    return () => controller.abort();
  }, [folder, version, fresh]);

  if (fresh) return fresh;
  return items && items.folder === folder ? items.items : null;
}

/** Drops the kept listing (tests start from nothing). */
export function forgetFolderItems(): void {
  cached = null;
}
