import { useEffect } from 'react';

/** The document title of a page: its parts (the page, then the world or what it shows), then the site's name. */
export function pageTitle(...parts: (string | null | undefined | false)[]): string {
  return [...parts.filter((part): part is string => typeof part === 'string' && part.trim() !== ''), 'Yumina'].join(' · ');
}

/**
 * Names the page in the browser's tab and history (issue 30 B): `useTitle('Play', worldName)` gives
 * "Play · Rain on Willow Street · Yumina". Leaving the page puts back the site's name until the
 * next page names itself. `enabled` false (a page shown inside another, such as the studio's
 * playtest) leaves the title to the page around it.
 */
export function useTitle(parts: (string | null | undefined | false)[], enabled = true): void {
  const title = pageTitle(...parts);
  useEffect(() => {
    if (!enabled) return;
    document.title = title;
    return () => {
      document.title = 'Yumina';
    };
  }, [title, enabled]);
}
