import { create } from 'zustand';

/** c: copy, x: cut (File Browser's names for the two clipboard modes). */
export type ClipboardKey = 'c' | 'x';

export interface ClipboardItem {
  /** Virtual path of the entry. */
  from: string;
  name: string;
}

export interface Clipboard {
  key: ClipboardKey;
  items: ClipboardItem[];
  /** The folder the entries were copied or cut from. */
  path: string;
}

interface ClipboardState {
  clipboard: Clipboard | null;
  setClipboard: (clipboard: Clipboard) => void;
  resetClipboard: () => void;
}

export const useClipboardStore = create<ClipboardState>()((set) => ({
  clipboard: null,
  setClipboard: (clipboard) => set({ clipboard }),
  resetClipboard: () => set({ clipboard: null }),
}));
