import { create } from 'zustand';
import type { CommandEnd } from '../api/command';
import { addToHistory } from '../components/shell/shell-history';
import { SHELL_DEFAULT_HEIGHT_EM } from '../components/shell/shell-height';

/** One command typed in the shell panel and what came back. */
export interface ShellEntry {
  id: number;
  /** The folder it ran in (virtual path). */
  folder: string;
  command: string;
  output: string[];
  /** Undefined while it runs. */
  end?: CommandEnd;
}

/** Entries kept on screen; the oldest go first. */
export const MAX_SHELL_ENTRIES = 100;

interface ShellState {
  open: boolean;
  /** Panel height in em (see shell-height.ts). */
  height: number;
  history: string[];
  entries: ShellEntry[];
  toggle: () => void;
  setOpen: (open: boolean) => void;
  setHeight: (height: number) => void;
  /** Starts an entry for a command about to run, adds it to the history, and returns its id. */
  startEntry: (folder: string, command: string) => number;
  appendOutput: (id: number, lines: readonly string[]) => void;
  finishEntry: (id: number, end: CommandEnd) => void;
  /** `clear`: empties the output; the history stays. */
  clear: () => void;
}

let nextEntryId = 1;

/**
 * The shell panel: open or closed, its height, history and output. Kept outside the panel so that
 * they survive leaving the file browser and coming back, as a terminal window would.
 */
export const useShellStore = create<ShellState>()((set) => ({
  open: false,
  height: SHELL_DEFAULT_HEIGHT_EM,
  history: [],
  entries: [],

  toggle: () => set((state) => ({ open: !state.open })),
  setOpen: (open) => set({ open }),
  setHeight: (height) => set({ height }),

  startEntry: (folder, command) => {
    const id = nextEntryId++;
    set((state) => ({
      history: addToHistory(state.history, command),
      entries: [...state.entries, { id, folder, command, output: [] }].slice(-MAX_SHELL_ENTRIES),
    }));
    return id;
  },

  appendOutput: (id, lines) =>
    set((state) => ({
      entries: state.entries.map((e) => (e.id === id ? { ...e, output: [...e.output, ...lines] } : e)),
    })),

  finishEntry: (id, end) =>
    set((state) => ({ entries: state.entries.map((e) => (e.id === id ? { ...e, end } : e)) })),

  clear: () => set({ entries: [] }),
}));
