import type { Theme } from '@filebrowser/contract';
import { THEMES } from '@filebrowser/contract';
import { create } from 'zustand';
import { startup } from '../startup';

interface ThemeState {
  /** "" follows the system's colour scheme. */
  theme: Theme;
  setTheme: (theme: string) => void;
}

export function normalizeTheme(value: string): Theme {
  return (THEMES as readonly string[]).includes(value) ? (value as Theme) : '';
}

/** Applies a theme to the document; CSS reads the attribute, and its absence follows the system. */
export function applyTheme(theme: Theme, root: HTMLElement = document.documentElement): void {
  if (theme) root.dataset.theme = theme;
  else delete root.dataset.theme;
}

export const useThemeStore = create<ThemeState>()((set) => ({
  theme: normalizeTheme(startup.Theme),
  setTheme: (value) => {
    const theme = normalizeTheme(value);
    applyTheme(theme);
    set({ theme });
  },
}));
