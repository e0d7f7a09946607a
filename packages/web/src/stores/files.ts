import type { FileInfo } from '@filebrowser/contract';
import { create } from 'zustand';
import { EMPTY_SELECTION, type Selection } from '../utils/selection';

interface FilesState {
  /** The folder the file browser shows (a file's parent when a file is open); null elsewhere. */
  currentFolder: string | null;
  /** The folder listing on screen, null when none is (a file is open, or elsewhere). */
  listing: FileInfo | null;
  /** Bumped whenever the listing on screen is known to be stale (e.g. after creating a folder). */
  listingVersion: number;
  /** Selected entries of the listing, by path. */
  selection: Selection;
  /** "Select multiple" mode: a click or tap adds to (or removes from) the selection. */
  multiple: boolean;
  setCurrentFolder: (path: string | null) => void;
  setListing: (listing: FileInfo | null) => void;
  invalidateListing: () => void;
  setSelection: (selection: Selection) => void;
  clearSelection: () => void;
  setMultiple: (multiple: boolean) => void;
}

export const useFilesStore = create<FilesState>()((set) => ({
  currentFolder: null,
  listing: null,
  listingVersion: 0,
  selection: EMPTY_SELECTION,
  multiple: false,
  setCurrentFolder: (currentFolder) => set({ currentFolder }),
  setListing: (listing) => set({ listing }),
  invalidateListing: () => set((state) => ({ listingVersion: state.listingVersion + 1 })),
  setSelection: (selection) => set({ selection }),
  clearSelection: () => set({ selection: EMPTY_SELECTION }),
  setMultiple: (multiple) => set({ multiple }),
}));
