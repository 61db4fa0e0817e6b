import { type AnchorHTMLAttributes, type ReactNode, useEffect, useState } from 'react';

/** A tiny client-side router: the path, and navigation without a reload. */
export function usePath(): string {
  const [path, setPath] = useState(() => window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    window.addEventListener('popstate', update);
    window.addEventListener('yumina:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('yumina:navigate', update);
    };
  }, []);
  return path;
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
  const [search, setSearch] = useState(() => window.location.search);
  useEffect(() => {
    const update = () => setSearch(window.location.search);
    window.addEventListener('popstate', update);
    window.addEventListener('yumina:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('yumina:navigate', update);
    };
  }, []);
  return new URLSearchParams(search);
}
