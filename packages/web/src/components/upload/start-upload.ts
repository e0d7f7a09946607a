import { fetchResource } from '../../api/resources';
import { fetchTree } from '../../api/uploads';
import { useLayoutStore } from '../../stores/layout';
import { showError } from '../../stores/toasts';
import { useUploadStore } from '../../stores/upload';
import { joinPath } from '../../utils/paths';
import {
  findClashes,
  foldersToInspect,
  planTargets,
  treeFromListing,
  type ClashChoice,
  type ExistingItem,
  type UploadTarget,
} from './clashes';
import type { UploadEntry } from './entries';

function queue(targets: readonly UploadTarget[], base: string): void {
  useUploadStore.getState().enqueue(
    targets.map(({ entry, relativePath, override }) => ({
      path: `${base}${relativePath}${entry.file ? '' : '/'}`,
      name: relativePath,
      size: entry.file?.size ?? 0,
      isDir: !entry.file,
      ...(entry.file && { file: entry.file }),
      override,
    })),
  );
}

/**
 * Uploads entries into a folder: checks them against what the folder holds (the listing on
 * screen when given, and a recursive listing of folders an upload merges into), asks whether to
 * replace or keep both when names clash, then queues them.
 */
export async function uploadEntries(
  entries: readonly UploadEntry[],
  destination: string,
  items?: readonly ExistingItem[],
): Promise<void> {
  if (entries.length === 0) return;
  const base = destination.endsWith('/') ? destination : `${destination}/`;
  try {
    const existing = items ?? (await fetchResource(base)).items ?? [];
    const listings = await Promise.all(
      foldersToInspect(entries, existing).map((name) => fetchTree(joinPath(base, name))),
    );
    const clashes = findClashes(entries, existing, treeFromListing(base, listings.flat()));
    const go = (choice: ClashChoice) => queue(planTargets(entries, clashes, choice, existing), base);
    if (clashes.length === 0) {
      go('replace');
      return;
    }
    useLayoutStore.getState().openPrompt('replace', {
      names: clashes.map((clash) => clash.name),
      onReplace: () => go('replace'),
      onKeep: () => go('keep'),
    });
  } catch (error) {
    showError(error);
  }
}
