import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate, usePath } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useHeaderData } from './header-data.ts';

/** Whether a nav link is the current page's section. */
const current = (path: string, to: string) => (to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`));

/**
 * The header of every page: Library, My worlds, Inbox (unread count), Settings, the credit
 * balance when the platform's provider is on, and the account menu. Below 760 px the links fold
 * into a menu behind one button; everything works with the keyboard.
 */
export function Header() {
  const path = usePath();
  const { info, refresh } = useSession();
  const account = info?.account ?? null;
  const { unread, credits, officialAvailable } = useHeaderData(account?.id ?? null);
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);

  const item = (to: string, label: string, extra?: ReactNode) => (
    <Link to={to} aria-current={current(path, to) ? 'page' : undefined}>
      {label}
      {extra}
    </Link>
  );

  return (
    <header className={`top${open ? ' open' : ''}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <Link to="/" className="brand">
        <img src="/favicon.svg" alt="" width={28} height={28} />
        Yumina
      </Link>
      <button type="button" className="menu-toggle secondary" aria-expanded={open} aria-controls="site-nav" onClick={() => setOpen((o) => !o)}>
        Menu
      </button>
      <nav id="site-nav" className="nav-main" aria-label="Main">
        {item('/library', 'Library')}
        {item('/studio', account ? 'My worlds' : 'Studio')}
        {account && item('/groups', 'Group scenes')}
        {account &&
          item(
            '/app/inbox',
            'Inbox',
            unread > 0 ? (
              <span className="count">
                <span data-testid="unread-count">{unread}</span>
                <span className="visually-hidden"> unread</span>
              </span>
            ) : null,
          )}
        {account && item('/app/settings', 'Settings')}
        {account?.isAdmin && item('/admin/reviews', 'Reviews')}
      </nav>
      <div className="nav-end">
        {account && officialAvailable && credits !== null && (
          <Link to="/app/settings#billing" className="credits-pill">
            <span data-testid="credit-balance">{credits}</span> credits
          </Link>
        )}
        {account ? (
          <AccountMenu
            name={account.displayName}
            isAdmin={account.isAdmin}
            onSignOut={async () => {
              await api('/api/auth/logout', { method: 'POST' });
              await refresh();
              navigate('/');
            }}
          />
        ) : (
          <>
            <Link to={`/login?returnTo=${encodeURIComponent(path)}`}>Sign in</Link>
            <Link to="/signup" className="button">
              Sign up
            </Link>
          </>
        )}
      </div>
    </header>
  );
}

/** A menu button (WAI-ARIA menu pattern): Enter/Space/ArrowDown open it, arrows move, Escape closes. */
function AccountMenu({ name, isAdmin, onSignOut }: { name: string; isAdmin: boolean; onSignOut(): void }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    const close = (e: MouseEvent) => {
      if (!menu.current?.contains(e.target as Node) && !button.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);
  const onKey = (e: KeyboardEvent) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') {
      setOpen(false);
      button.current?.focus();
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      all[(at + 1) % all.length]?.focus();
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      all[(at - 1 + all.length) % all.length]?.focus();
    } else if (e.key === 'Tab') setOpen(false);
  };
  const go = (to: string) => {
    setOpen(false);
    navigate(to);
  };
  return (
    <div className="account-menu">
      <button
        ref={button}
        type="button"
        className="secondary"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls="account-menu"
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setOpen(true);
          }
        }}
        data-testid="account-button"
      >
        <span data-testid="account-name">{name}</span> ▾
      </button>
      {open && (
        <div id="account-menu" role="menu" aria-label="Account" ref={menu} onKeyDown={onKey}>
          <button type="button" role="menuitem" tabIndex={-1} onClick={() => go('/app/settings')}>
            Settings
          </button>
          <button type="button" role="menuitem" tabIndex={-1} onClick={() => go('/app/settings#billing')}>
            Credits and billing
          </button>
          <button type="button" role="menuitem" tabIndex={-1} onClick={() => go('/app/models')}>
            Models
          </button>
          {isAdmin && (
            <>
              <button type="button" role="menuitem" tabIndex={-1} onClick={() => go('/admin/reviews')}>
                Review queue
              </button>
              <button type="button" role="menuitem" tabIndex={-1} onClick={() => go('/admin/credits')}>
                Grant credits
              </button>
            </>
          )}
          <button
            type="button"
            role="menuitem"
            tabIndex={-1}
            onClick={() => {
              setOpen(false);
              onSignOut();
            }}
          >
            Sign out
          </button>
        </div>
      )}
    </div>
  );
}
