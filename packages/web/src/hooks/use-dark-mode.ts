import { useSyncExternalStore } from 'react';
import { useThemeStore } from '../stores/theme';

const QUERY = '(prefers-color-scheme: dark)';

function subscribe(onChange: () => void): () => void {
  if (typeof window.matchMedia !== 'function') return () => undefined;
  const media = window.matchMedia(QUERY);
  media.addEventListener('change', onChange);
  return () => media.removeEventListener('change', onChange);
}

const systemPrefersDark = () => typeof window.matchMedia === 'function' && window.matchMedia(QUERY).matches;

/**
 * Whether the page is dark: the chosen theme, or the system's scheme when none is chosen. For
 * what CSS cannot reach, such as the editor's syntax colours.
 */
export function useDarkMode(): boolean {
  const theme = useThemeStore((state) => state.theme);
  const system = useSyncExternalStore(subscribe, systemPrefersDark, () => false);
  return theme === '' ? system : theme === 'dark';
}
