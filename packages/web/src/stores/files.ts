import { create } from 'zustand';

interface FilesState {
  /** The folder the file browser shows (a file's parent when a file is open); null elsewhere. */
  currentFolder: string | null;
  /** Bumped whenever the listing on screen is known to be stale (e.g. after creating a folder). */
  listingVersion: number;
  setCurrentFolder: (path: string | null) => void;
  invalidateListing: () => void;
}

export const useFilesStore = create<FilesState>()((set) => ({
  currentFolder: null,
  listingVersion: 0,
  setCurrentFolder: (currentFolder) => set({ currentFolder }),
  invalidateListing: () => set((state) => ({ listingVersion: state.listingVersion + 1 })),
}));
