import type { FileInfo } from '@filebrowser/contract';
import { useEffect, useState } from 'react';
import { errorStatus, errorText } from '../../api/client';
import { fetchResource } from '../../api/resources';
import { useFilesStore } from '../../stores/files';
import { parentPath, trimTrailingSlash } from '../../utils/paths';

export type ResourceState =
  | { status: 'loading' }
  | { status: 'ready'; resource: FileInfo }
  | { status: 'error'; code: number; message: string }
  /** The server answered for another path than the one asked for. */
  | { status: 'mismatch' };

interface Loaded {
  path: string;
  version: number;
  state: ResourceState;
}

/**
 * Loads the file or folder at `path`. A new path shows the loading state; a reload of the same
 * path (after a change) keeps the current listing on screen until the fresh one arrives, with
 * `pending` telling that a request is under way. So does a step from one file to another of
 * the same folder (previous/next in the preview), which would otherwise flash the page.
 */
export function useResource(path: string): { state: ResourceState; pending: boolean } {
  const listingVersion = useFilesStore((store) => store.listingVersion);
  const [loaded, setLoaded] = useState<Loaded | null>(null);

  useEffect(() => {
    let active = true;
    const controller = new AbortController();
    const settle = (state: ResourceState) => active && setLoaded({ path, version: listingVersion, state });
    fetchResource(path, controller.signal).then(
      (resource) => {
        const matches = trimTrailingSlash(resource.path) === trimTrailingSlash(path);
        settle(matches ? { status: 'ready', resource } : { status: 'mismatch' });
      },
      (error: unknown) => settle({ status: 'error', code: errorStatus(error), message: errorText(error) }),
    );
    return () => {
      active = false;
      controller.abort();
    };
  }, [path, listingVersion]);

  const samePath = loaded?.path === path;
  const keep = samePath || (loaded !== null && isSiblingFileStep(loaded, path));
  return {
    state: loaded && keep ? loaded.state : { status: 'loading' },
    pending: !samePath || loaded.version !== listingVersion,
  };
}

function isSiblingFileStep(loaded: Loaded, path: string): boolean {
  return (
    loaded.state.status === 'ready' &&
    !loaded.state.resource.isDir &&
    !path.endsWith('/') &&
    parentPath(loaded.path) === parentPath(path)
  );
}
