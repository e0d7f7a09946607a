import type { FileInfo, FileItem, Permissions, Sorting } from '@filebrowser/contract';
import { newJobId, startJob, withProgress } from '../../api/jobs';
import { archiveURL, deleteResource, downloadURL, fetchResource } from '../../api/resources';
import { i18n } from '../../i18n';
import { updateUser } from '../../api/users';
import { useAuthStore } from '../../stores/auth';
import { useClipboardStore, type ClipboardKey } from '../../stores/clipboard';
import { useFilesStore } from '../../stores/files';
import { useJobsStore } from '../../stores/jobs';
import { useLayoutStore } from '../../stores/layout';
import { showError } from '../../stores/toasts';
import { clashingNames } from '../../utils/clash';
import { triggerDownload } from '../../utils/download';
import { trimTrailingSlash } from '../../utils/paths';
import { selectedInOrder } from '../../utils/selection';
import { nextViewMode } from './listing/listing-layout';
import { nextSorting, type SortField } from './listing/sorting';

/*
 * What the file browser does with entries. Header buttons, keyboard shortcuts, drag and drop and
 * the prompts all come here, so a permission or a clash is handled the same way whichever way the
 * user asked. Each function reads the current state from the stores when it runs.
 */

export type TransferKind = 'copy' | 'move';

/** The minimum an entry needs to be copied or moved: where it is and what it is called. */
export interface TransferItem {
  path: string;
  name: string;
}

export function samePath(a: string, b: string): boolean {
  return trimTrailingSlash(a) === trimTrailingSlash(b);
}

/** Whether `path` is `folder` itself or lies inside it (a folder cannot go into itself). */
export function isInside(path: string, folder: string): boolean {
  const base = trimTrailingSlash(folder);
  const target = trimTrailingSlash(path);
  return target === base || target.startsWith(base === '/' ? '/' : `${base}/`);
}

function permissions(): Permissions | null {
  return useAuthStore.getState().user?.perm ?? null;
}

/** The permission an operation needs (contract 1.7; copying creates, moving renames). */
export function allowed(operation: 'copy' | 'move' | 'rename' | 'delete' | 'download' | 'create'): boolean {
  const perm = permissions();
  if (!perm) return false;
  switch (operation) {
    case 'copy':
    case 'create':
      return perm.create;
    case 'move':
    case 'rename':
      return perm.rename;
    case 'delete':
      return perm.delete;
    case 'download':
      return perm.download;
  }
}

/** The selected entries of the listing on screen, in the listing's order. */
export function currentSelection(): FileItem[] {
  const { listing, selection } = useFilesStore.getState();
  return selectedInOrder(listing?.items ?? [], selection);
}

/** Marks the listing stale; the page fetches it again and keeps it on screen meanwhile. */
export function reloadListing(): void {
  useFilesStore.getState().invalidateListing();
}

/** What the jobs panel calls a transfer: the entry's name, or how many there are. */
function transferLabel(items: readonly TransferItem[]): string {
  const [first] = items;
  return items.length === 1 && first ? first.name : i18n.t('jobs.severalItems', { count: items.length });
}

/**
 * Copies or moves entries into `destination` as a job on the server: the jobs panel shows its
 * progress and lets it be cancelled, and reloads the listing when it ends, while the page stays
 * usable. Resolves once the job has started; a refusal (a missing permission) is shown.
 */
export async function runTransfer(
  kind: TransferKind,
  items: readonly TransferItem[],
  destination: string,
  options: { override?: boolean; rename?: boolean },
): Promise<boolean> {
  const action = kind === 'copy' ? 'copy' : 'rename';
  try {
    const { id } = await startJob({
      action,
      items: items.map((item) => trimTrailingSlash(item.path)),
      destination: trimTrailingSlash(destination) || '/',
      override: options.override ?? false,
      rename: options.rename ?? false,
    });
    useJobsStore.getState().follow(id, action, transferLabel(items));
    return true;
  } catch (error) {
    showError(error);
    return false;
  }
}

export interface TransferRequest {
  kind: TransferKind;
  items: readonly TransferItem[];
  /** The folder the entries are in. */
  from: string;
  /** The folder they go to. */
  destination: string;
  /** What the destination holds, to find clashing names. */
  destinationItems: readonly { name: string }[];
  /** Runs before the replace-rename prompt opens (a prompt closes itself so the next one shows). */
  beforePrompt?: () => void;
  /** Runs after every entry arrived. */
  onSuccess?: () => void;
}

/**
 * Copies or moves with File Browser's rules: a copy into the same folder gets free names
 * ("name(1).ext"); names that clash at the destination ask whether to overwrite or rename; a move
 * into the folder the entries are already in changes nothing.
 * Resolves once done, or once the question is on screen ('asked').
 */
export async function transferOrAsk(
  request: TransferRequest,
): Promise<'done' | 'failed' | 'asked' | 'nothing'> {
  const { kind, items, from, destination, destinationItems, beforePrompt, onSuccess } = request;
  if (items.length === 0) return 'nothing';
  const finish = (ok: boolean) => {
    if (ok) onSuccess?.();
    return ok ? 'done' : 'failed';
  };
  if (samePath(from, destination)) {
    if (kind === 'move') return 'nothing';
    return finish(await runTransfer(kind, items, destination, { rename: true }));
  }
  const clashes = clashingNames(
    items.map((item) => item.name),
    destinationItems,
  );
  if (clashes.length > 0) {
    beforePrompt?.();
    useLayoutStore.getState().openPrompt('replace-rename', {
      clashes,
      onChoose: (choice) => {
        void runTransfer(kind, items, destination, {
          override: choice === 'overwrite',
          rename: choice === 'rename',
        }).then((ok) => finish(ok));
      },
    });
    return 'asked';
  }
  return finish(await runTransfer(kind, items, destination, {}));
}

/** Drops entries onto a folder of the listing: a move, with the clash question. */
export async function moveIntoFolder(
  items: readonly FileItem[],
  target: FileItem,
  from: string,
): Promise<void> {
  if (!allowed('move') || !target.isDir || items.length === 0) return;
  if (items.some((item) => isInside(target.path, item.path))) return;
  try {
    const destination = await fetchResource(target.path.endsWith('/') ? target.path : `${target.path}/`);
    await transferOrAsk({
      kind: 'move',
      items,
      from,
      destination: target.path,
      destinationItems: destination.items ?? [],
    });
  } catch (error) {
    showError(error);
  }
}

/** Ctrl/Cmd+C and Ctrl/Cmd+X: remembers the selected entries and whether they are to be moved. */
export function putInClipboard(key: ClipboardKey, items: readonly FileItem[], folder: string): boolean {
  if (items.length === 0) return false;
  if (!allowed(key === 'x' ? 'move' : 'copy')) return false;
  useClipboardStore.getState().setClipboard({
    key,
    items: items.map((item) => ({ from: item.path, name: item.name })),
    path: folder,
  });
  return true;
}

/** Ctrl/Cmd+V: copies or moves what the clipboard holds into the folder on screen. */
export async function pasteInto(folder: FileInfo): Promise<void> {
  const { clipboard, resetClipboard } = useClipboardStore.getState();
  if (!clipboard || clipboard.items.length === 0) return;
  const kind: TransferKind = clipboard.key === 'x' ? 'move' : 'copy';
  if (!allowed(kind)) return;
  const items = clipboard.items.map((item) => ({ path: item.from, name: item.name }));
  const result = await transferOrAsk({
    kind,
    items,
    from: clipboard.path,
    destination: folder.path,
    destinationItems: folder.items ?? [],
    // A cut is used up by the move; a copy can be pasted again.
    onSuccess: kind === 'move' ? resetClipboard : undefined,
  });
  if (result === 'nothing' && kind === 'move') resetClipboard();
}

/** One file downloads directly; several entries or a folder ask for an archive format first. */
export function downloadEntries(items: readonly FileItem[], folder: string): void {
  if (!allowed('download')) return;
  const [first] = items;
  if (items.length === 1 && first && !first.isDir) {
    triggerDownload(downloadURL(first.path));
    return;
  }
  const paths = items.length > 0 ? items.map((item) => item.path) : [folder];
  const [only] = paths;
  const label = paths.length === 1 && only ? only.split('/').filter(Boolean).pop() || '/' : undefined;
  useLayoutStore.getState().openPrompt('download', {
    onChoose: (format) => {
      // The browser downloads through a plain link (to disk, never into the page's memory); the
      // server reports how much of the selection it has read under the id given with it.
      const id = newJobId();
      useJobsStore
        .getState()
        .follow(id, 'archive', label ?? i18n.t('jobs.severalItems', { count: paths.length }));
      triggerDownload(withProgress(archiveURL(paths, format), id));
    },
  });
}

/** Deletes entries one after the other; the first failure stops and is thrown. */
export async function deleteEntries(items: readonly FileItem[]): Promise<void> {
  for (const item of items) await deleteResource(item.path);
}

/** The view switch: shows the next mode at once and saves it to the user. */
export async function switchViewMode(): Promise<void> {
  const user = useAuthStore.getState().user;
  if (!user) return;
  const viewMode = nextViewMode(user.viewMode);
  useAuthStore.setState({ user: { ...user, viewMode } });
  try {
    await updateUser({ id: user.id, viewMode }, ['viewMode']);
  } catch (error) {
    const now = useAuthStore.getState().user;
    if (now) useAuthStore.setState({ user: { ...now, viewMode: user.viewMode } });
    showError(error);
  }
}

/** A click on a column header: saves the new sorting to the user, then reloads (the server sorts). */
export async function changeSorting(current: Sorting, by: SortField): Promise<void> {
  const user = useAuthStore.getState().user;
  if (!user) return;
  try {
    await updateUser({ id: user.id, sorting: nextSorting(current, by) }, ['sorting']);
    reloadListing();
  } catch (error) {
    showError(error);
  }
}
