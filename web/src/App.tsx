import { useEffect, useState } from 'react';
import { api } from './lib/api.ts';
import { usePath } from './lib/router.tsx';
import { SessionProvider } from './lib/session.tsx';
import { DemoBoardPage } from './companion/DemoBoard.tsx';
import { AuthPage } from './pages/AuthPage.tsx';
import { ForgotPasswordPage } from './account/ForgotPasswordPage.tsx';
import { ResetPasswordPage } from './account/ResetPasswordPage.tsx';
import { VerifyEmailPage } from './account/VerifyEmailPage.tsx';
import { LibraryPage } from './library/LibraryPage.tsx';
import { HomePage } from './home/HomePage.tsx';
import { Header } from './shell/Header.tsx';
import { NotFound } from './shell/NotFound.tsx';
import { MyWorldsPage } from './studio/MyWorldsPage.tsx';
import { CreditsPage } from './admin/CreditsPage.tsx';
import { WorldPage } from './worlds/WorldPage.tsx';
import { ModelsPage } from './pages/ModelsPage.tsx';
import { PlayerPage } from './pages/PlayerPage.tsx';
import { SettingsPage } from './pages/SettingsPage.tsx';
import { StudioPage } from './studio/StudioPage.tsx';
import { ReviewsPage } from './admin/ReviewsPage.tsx';
import { DevSandboxRoute } from './sandbox/dev-route.tsx';
import { InboxPage } from './updates/InboxPage.tsx';

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
  const [version, setVersion] = useState<Version | null>(null);
  useEffect(() => {
    api<Version>('/api/version').then(setVersion, () => setVersion(null));
  }, []);
  return (
    <div className="shell">
      <Header />
      <main id="main" tabIndex={-1}>
        <Page path={path} />
      </main>
      <footer data-testid="version">{version ? `v${version.version} · ${version.mode}` : 'connecting…'}</footer>
    </div>
  );
}

/** The page of an address; anything unknown is the "not found" page. */
function Page({ path }: { path: string }) {
  const param = (prefix: string) => decodeURIComponent(path.slice(prefix.length).replace(/\/$/, ''));
  if (path === '/') return <HomePage />;
  if (path === '/login') return <AuthPage mode="login" key="login" />;
  if (path === '/signup') return <AuthPage mode="signup" key="signup" />;
  if (path === '/forgot-password') return <ForgotPasswordPage />;
  if (path === '/reset-password') return <ResetPasswordPage />;
  if (path === '/verify-email') return <VerifyEmailPage />;
  if (/^\/app\/settings\/?$/.test(path)) return <SettingsPage />;
  if (path === '/app/models') return <ModelsPage />;
  if (path === '/library') return <LibraryPage />;
  if (/^\/play\/[^/]+$/.test(path)) return <PlayerPage worldId={param('/play/')} />;
  if (/^\/studio\/?$/.test(path)) return <MyWorldsPage />;
  if (/^\/studio\/[^/]+(\/character)?\/?$/.test(path)) return <StudioPage path={path} />;
  if (path === '/admin/reviews') return <ReviewsPage />;
  if (path === '/admin/credits') return <CreditsPage />;
  if (path === '/adventure/demo') return <DemoBoardPage />;
  if (path === '/dev/sandbox') return <DevSandboxRoute />;
  if (path === '/app/inbox' || path === '/inbox') return <InboxPage />;
  if (/^\/worlds\/[^/]+\/?$/.test(path)) return <WorldPage id={param('/worlds/')} />;
  return <NotFound />;
}
