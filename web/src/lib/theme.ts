/**
 * The app's theme (issue 50): light, dark or the system's, chosen in the app and kept in this
 * browser. `data-theme` on the root element overrides the system's preference (styles.css); the
 * choice is applied before the first render (main.tsx), so a page never flashes the other theme.
 */
import { useSyncExternalStore } from 'react';

export type Theme = 'system' | 'light' | 'dark';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
const KEY = 'yumina:theme';
const listeners = new Set<() => void>();

export function storedTheme(): Theme {
  try {
    const v = window.localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(theme: Theme = storedTheme()): void {
  const root = document.documentElement;
  if (theme === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', theme);
}

export function setTheme(theme: Theme): void {
  try {
    if (theme === 'system') window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, theme);
  } catch {
    // storage refused (private mode): the choice lasts for this page
  }
  applyTheme(theme);
  for (const l of listeners) l();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useTheme(): Theme {
  return useSyncExternalStore(subscribe, storedTheme);
}
