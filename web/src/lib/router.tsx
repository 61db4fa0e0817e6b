import { type AnchorHTMLAttributes, type ReactNode, useMemo, useSyncExternalStore } from 'react';

/** Calls `onChange` when the address changes: the back and forward buttons, and `navigate`. */
function subscribeToAddress(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener('yumina:navigate', onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener('yumina:navigate', onChange);
  };
}

/**
 * A tiny client-side router: the path, and navigation without a reload. Read through
 * useSyncExternalStore, which compares the address again once it listens: a change between the
 * first render and the subscription (a page's own effect that navigates on mount runs before the
 * app's, the back button right after the load) is not missed.
 */
export function usePath(): string {
  return useSyncExternalStore(subscribeToAddress, () => window.location.pathname);
}

export function navigate(to: string): void {
  window.history.pushState(null, '', to);
  window.dispatchEvent(new Event('yumina:navigate'));
  // A new page starts at its top, unless the link names a place on it.
  if (!to.includes('#')) window.scrollTo(0, 0);
}

/** Set by routes.tsx: starts loading the page of a link the reader is about to follow. */
let preloader: ((to: string) => void) | null = null;
export function setLinkPreloader(fn: (to: string) => void): void {
  preloader = fn;
}

/**
 * An in-app link: navigates without a reload, and starts loading the target page's code when the
 * pointer rests on it or it gets the focus (a few hundred ms before the click).
 */
export function Link({ to, children, className, ...rest }: { to: string; children: ReactNode; className?: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  return (
    <a
      {...rest}
      href={to}
      className={className}
      onPointerEnter={(e) => {
        preloader?.(to);
        rest.onPointerEnter?.(e);
      }}
      onFocus={(e) => {
        preloader?.(to);
        rest.onFocus?.(e);
      }}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** The query string of the current address, kept current across client-side navigation. */
export function useSearch(): URLSearchParams {
  const search = useSyncExternalStore(subscribeToAddress, () => window.location.search);
  return useMemo(() => new URLSearchParams(search), [search]);
}
