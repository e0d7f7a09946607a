import { create } from 'zustand';
import type { ExistingItem } from '../components/upload/clashes';

/** What each prompt needs to open; a new prompt adds its entry here and its card to the registry. */
export interface PromptPayloads {
  /** The sidebar drawer on narrow screens: a prompt so that Escape and the overlay close it. */
  sidebar: Record<string, never>;
  help: Record<string, never>;
  /** Creates a folder inside `base` (a virtual folder path). */
  newDir: { base: string };
  /** Creates an empty file inside `base` (a virtual folder path). */
  newFile: { base: string };
  /** A yes/no question; with `askCurrentPassword` the answer carries the caller's password. */
  confirm: {
    title: string;
    message: string;
    confirmLabel: string;
    askCurrentPassword?: boolean;
    onConfirm: (currentPassword: string) => Promise<void> | void;
  };
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
  openPrompt: <K extends PromptName>(name: K, props: PromptPayloads[K], onClose?: () => void) => number;
  /** Closes the prompt on screen (the oldest) and runs its close callback. */
  closePrompt: () => void;
  /** Drops every prompt without running callbacks, as navigation does. */
  closeAllPrompts: () => void;
  setLoading: (loading: boolean) => void;
}

let nextPromptId = 1;

export const useLayoutStore = create<LayoutState>()((set, get) => ({
  prompts: [],
  loading: false,

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

  closeAllPrompts: () => set({ prompts: [] }),

  setLoading: (loading) => set({ loading }),
}));

export const selectCurrentPrompt = (state: LayoutState): PromptEntry | undefined => state.prompts[0];
