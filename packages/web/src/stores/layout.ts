import type { ArchiveFormat, FileInfo, FileItem } from '@filebrowser/contract';
import { create } from 'zustand';
import type { ExistingItem } from '../components/upload/clashes';

/** What a name clash is resolved with: replace what is there, or let the server pick a free name. */
export type ClashChoice = 'overwrite' | 'rename';

/** What each prompt needs to open; a new prompt adds its entry here and its card to the registry. */
export interface PromptPayloads {
  /** The sidebar drawer on narrow screens: a prompt so that Escape and the overlay close it. */
  sidebar: Record<string, never>;
  help: Record<string, never>;
  /** Creates a folder inside `base` (a virtual folder path). */
  newDir: { base: string };
  /** Creates an empty file inside `base` (a virtual folder path). */
  newFile: { base: string };
  /** The overflow menu of the header actions on narrow screens (drawn by the header). */
  more: Record<string, never>;
  /**
   * Renames one entry; `onRenamed` gets its new path (the preview follows the file to it,
   * the listing keeps it selected).
   */
  rename: { item: FileItem; onRenamed?: (path: string) => void };
  /** Deletes entries; `onDeleted` runs once they are gone (the preview moves on from them). */
  delete: { items: FileItem[]; onDeleted?: () => void };
  /** Moves entries of the folder `from` to a folder chosen in the prompt. */
  move: { items: FileItem[]; from: string };
  /** Copies entries of the folder `from` to a folder chosen in the prompt. */
  copy: { items: FileItem[]; from: string };
  /** Facts about the selected entries, or about `folder` itself when none is selected. */
  info: { items: FileItem[]; folder?: FileInfo };
  /** Asks for an archive format, then downloads. */
  download: { onChoose: (format: ArchiveFormat) => void };
  /** Names clash at the destination: overwrite, rename (keep both) or cancel. */
  'replace-rename': { clashes: string[]; onChoose: (choice: ClashChoice) => void };
  /** A yes/no question; with `askCurrentPassword` the answer carries the caller's password. */
  confirm: {
    title: string;
    message: string;
    confirmLabel: string;
    askCurrentPassword?: boolean;
    onConfirm: (currentPassword: string) => Promise<void> | void;
  };
  /** The caller's share links of a virtual path; a folder path ends with "/". */
  share: { path: string };
  /** The search overlay; searches inside `dir` (a virtual folder path). */
  search: { dir: string };
  /** The editor has unsaved changes; `onDiscard` leaves without saving them. */
  discardEditorChanges: { onDiscard: () => void };
  /** Uploads files or a folder into `base`; `items` are its entries when the caller has them. */
  upload: { base: string; items?: readonly ExistingItem[] };
  /** Upload name clashes: replace what is there, or keep both (the upload goes under a free name). */
  replace: { names: string[]; onReplace: () => void; onKeep: () => void };
}

export type PromptName = keyof PromptPayloads;

export type PromptEntry = {
  [K in PromptName]: {
    id: number;
    name: K;
    props: PromptPayloads[K];
    onClose?: () => void;
    /** What had the focus when the prompt opened; it gets it back when the last prompt closes. */
    opener?: HTMLElement;
  };
}[PromptName];

function focusedElement(): HTMLElement | undefined {
  return typeof document !== 'undefined' && document.activeElement instanceof HTMLElement
    ? document.activeElement
    : undefined;
}

interface LayoutState {
  /** Open prompts, oldest first; the oldest is the one on screen. */
  prompts: PromptEntry[];
  loading: boolean;
  /** Where pages put their actions in the header (the header's action area, once mounted). */
  headerSlot: HTMLElement | null;
  openPrompt: <K extends PromptName>(name: K, props: PromptPayloads[K], onClose?: () => void) => number;
  /** Closes the prompt on screen (the oldest) and runs its close callback. */
  closePrompt: () => void;
  /**
   * Closes one given prompt (running its close callback) wherever it is in the stack: a prompt that
   * finishes its work late must not close whatever prompt came up meanwhile.
   */
  dismissPrompt: (id: number) => void;
  /** Drops every prompt without running callbacks, as navigation does. */
  closeAllPrompts: () => void;
  setLoading: (loading: boolean) => void;
  setHeaderSlot: (element: HTMLElement | null) => void;
}

let nextPromptId = 1;

export const useLayoutStore = create<LayoutState>()((set, get) => ({
  prompts: [],
  loading: false,
  headerSlot: null,

  openPrompt: (name, props, onClose) => {
    const id = nextPromptId++;
    const entry = { id, name, props, onClose, opener: focusedElement() } as PromptEntry;
    set((state) => ({ prompts: [...state.prompts, entry] }));
    return id;
  },

  closePrompt: () => {
    const [oldest, ...rest] = get().prompts;
    if (!oldest) return;
    set({ prompts: rest });
    oldest.onClose?.();
    if (rest.length === 0 && oldest.opener?.isConnected) oldest.opener.focus();
  },

  dismissPrompt: (id) => {
    const { prompts } = get();
    const entry = prompts.find((prompt) => prompt.id === id);
    if (!entry) return;
    const rest = prompts.filter((prompt) => prompt.id !== id);
    set({ prompts: rest });
    entry.onClose?.();
    if (rest.length === 0 && entry.opener?.isConnected) entry.opener.focus();
  },

  closeAllPrompts: () => set({ prompts: [] }),

  setLoading: (loading) => set({ loading }),
  setHeaderSlot: (headerSlot) => set({ headerSlot }),
}));

export const selectCurrentPrompt = (state: LayoutState): PromptEntry | undefined => state.prompts[0];
