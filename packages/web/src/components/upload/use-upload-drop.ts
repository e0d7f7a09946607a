import { useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { useAuthStore } from '../../stores/auth';
import type { ExistingItem } from './clashes';
import { carriesFiles, entriesFromDataTransfer } from './entries';
import { uploadEntries } from './start-upload';

/** The attribute that makes an element (e.g. a folder of the listing) a drop target of its own. */
export const UPLOAD_FOLDER_ATTRIBUTE = 'data-upload-folder';

export interface UploadDropOptions {
  /** The folder a drop uploads into; null turns dropping off. */
  base: string | null;
  /** Its entries, when the caller has them. */
  items?: readonly ExistingItem[];
}

export interface UploadDropHandlers {
  onDragEnter?: (event: DragEvent<HTMLElement>) => void;
  onDragOver?: (event: DragEvent<HTMLElement>) => void;
  onDragLeave?: (event: DragEvent<HTMLElement>) => void;
  onDrop?: (event: DragEvent<HTMLElement>) => void;
}

/** The folder under the pointer: the nearest element marked with `data-upload-folder`, else `base`. */
function dropFolder(target: EventTarget | null, base: string): string {
  const marked = target instanceof Element ? target.closest(`[${UPLOAD_FOLDER_ATTRIBUTE}]`) : null;
  return marked?.getAttribute(UPLOAD_FOLDER_ATTRIBUTE) || base;
}

/**
 * Files and folders dragged in from the desktop upload into `base` (or into a folder of the
 * listing marked with `data-upload-folder`), for users who may create files. Drags that carry no
 * files, such as items of the listing being moved, pass through untouched. Spread `handlers` on
 * the element that receives drops; `dragging` tells when to show it as a target.
 */
export function useUploadDrop({ base, items }: UploadDropOptions): {
  dragging: boolean;
  handlers: UploadDropHandlers;
} {
  const canCreate = useAuthStore((state) => !!state.user?.perm.create);
  const [dragging, setDragging] = useState(false);
  // dragenter/dragleave fire for every child the pointer crosses: count them.
  const depth = useRef(0);
  const enabled = canCreate && base !== null;

  // A file dropped just beside the zone would make the browser open it in place of the app,
  // ending the uploads under way: outside the zone, such drops are refused.
  useEffect(() => {
    if (!enabled) return;
    const refuse = (event: globalThis.DragEvent) => {
      if (event.defaultPrevented || !carriesFiles(event.dataTransfer)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'none';
    };
    window.addEventListener('dragover', refuse);
    window.addEventListener('drop', refuse);
    return () => {
      window.removeEventListener('dragover', refuse);
      window.removeEventListener('drop', refuse);
    };
  }, [enabled]);

  const handlers = useMemo<UploadDropHandlers>(() => {
    if (!enabled || base === null) return {};
    return {
      onDragEnter: (event) => {
        if (!carriesFiles(event.dataTransfer)) return;
        event.preventDefault();
        depth.current += 1;
        setDragging(true);
      },
      onDragOver: (event) => {
        if (!carriesFiles(event.dataTransfer)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'copy';
      },
      onDragLeave: (event) => {
        if (!carriesFiles(event.dataTransfer)) return;
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0) setDragging(false);
      },
      onDrop: (event) => {
        if (!carriesFiles(event.dataTransfer)) return;
        event.preventDefault();
        depth.current = 0;
        setDragging(false);
        const folder = dropFolder(event.target, base);
        // The DataTransfer is emptied when this handler returns: take its entries now.
        const reading = entriesFromDataTransfer(event.dataTransfer);
        void reading.then((entries) => uploadEntries(entries, folder, folder === base ? items : undefined));
      },
    };
  }, [enabled, base, items]);

  return { dragging: enabled && dragging, handlers };
}
