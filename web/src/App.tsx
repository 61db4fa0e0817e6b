import { useEffect, useState } from 'react';
import { api } from './lib/api.ts';
import { Link, navigate, usePath } from './lib/router.tsx';
import { SessionProvider, useSession } from './lib/session.tsx';
import { DemoBoardPage } from './companion/DemoBoard.tsx';
import { AuthPage } from './pages/AuthPage.tsx';
import { LibraryPage } from './pages/LibraryPage.tsx';
import { ModelsPage } from './pages/ModelsPage.tsx';
import { PlayerPage } from './pages/PlayerPage.tsx';
import { SettingsPage } from './pages/SettingsPage.tsx';
import { StudioPage } from './studio/StudioPage.tsx';
import { ReviewsPage } from './admin/ReviewsPage.tsx';
import { DevSandboxRoute } from './sandbox/dev-route.tsx';
import { InboxPage } from './updates/InboxPage.tsx';
import { WorldDetailsPage } from './updates/WorldDetailsPage.tsx';

interface Version {
  version: string;
  mode: string;
}

export function App() {
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}

function Shell() {
  const path = usePath();
  const { info, refresh } = useSession();
  const [version, setVersion] = useState<Version | null>(null);
  useEffect(() => {
    api<Version>('/api/version').then(setVersion, () => setVersion(null));
  }, []);
  let page = <Home />;
  if (path === '/login') page = <AuthPage mode="login" key="login" />;
  else if (path === '/signup') page = <AuthPage mode="signup" key="signup" />;
  else if (path.startsWith('/app/settings')) page = <SettingsPage />;
  else if (path === '/app/models') page = <ModelsPage />;
  else if (path === '/library') page = <LibraryPage />;
  else if (/^\/play\/[^/]+$/.test(path)) page = <PlayerPage worldId={decodeURIComponent(path.slice('/play/'.length))} />;
  else if (path.startsWith('/studio/')) page = <StudioPage path={path} />;
  else if (path === '/admin/reviews') page = <ReviewsPage />;
  else if (path === '/adventure/demo') page = <DemoBoardPage />;
  else if (path === '/dev/sandbox') page = <DevSandboxRoute />;
  else if (path === '/app/inbox') page = <InboxPage />;
  else if (/^\/worlds\/[^/]+$/.test(path)) page = <WorldDetailsPage id={decodeURIComponent(path.slice('/worlds/'.length))} />;
  return (
    <div className="shell">
      <header className="top">
        <Link to="/" className="brand">
          Yumina
        </Link>
        <nav>
          {info?.account ? (
            <>
              <Link to="/app/settings">{info.account.displayName}</Link>
              <button
                type="button"
                className="link"
                onClick={async () => {
                  await api('/api/auth/logout', { method: 'POST' });
                  await refresh();
                  navigate('/');
                }}
              >
                Sign out
              </button>
            </>
          ) : (
            <>
              <Link to="/login">Sign in</Link>
              <Link to="/signup">Sign up</Link>
            </>
          )}
        </nav>
      </header>
      <main>{page}</main>
      <footer data-testid="version">{version ? `v${version.version} · ${version.mode}` : 'connecting…'}</footer>
    </div>
  );
}

function Home() {
  return (
    <section>
      <h1>Interactive fiction worlds, driven by AI, turn by turn.</h1>
      <p>Play a world: a lorebook, variables, rules and its own interface, narrated by an AI model.</p>
    </section>
  );
}
