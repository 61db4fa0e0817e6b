import { Component, type ReactNode, Suspense, useEffect, useState } from 'react';
import { api } from './lib/api.ts';
import { usePath } from './lib/router.tsx';
import { SessionProvider } from './lib/session.tsx';
import { renderRoute } from './routes.tsx';
import { Header } from './shell/Header.tsx';
import { PageLoading } from './shell/PageLoading.tsx';

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
        {/* Each page's code loads when it is entered (routes.tsx); meanwhile the loading state holds its place. */}
        <PageBoundary path={path}>
          <Suspense fallback={<PageLoading />}>{renderRoute(path)}</Suspense>
        </PageBoundary>
      </main>
      <footer data-testid="version">{version ? `v${version.version} · ${version.mode}` : 'connecting…'}</footer>
    </div>
  );
}

/**
 * A page whose code cannot be loaded (offline, or a new deployment replaced the file the open tab
 * asks for) says so and offers a reload, instead of leaving the page blank. Another address
 * starts afresh.
 */
class PageBoundary extends Component<{ path: string; children: ReactNode }, { failedAt: string | null }> {
  override state = { failedAt: null as string | null };
  static getDerivedStateFromError(): { failedAt: string } {
    return { failedAt: window.location.pathname };
  }
  override render() {
    if (this.state.failedAt === null || this.state.failedAt !== this.props.path) return this.props.children;
    return (
      <section className="card" role="alert" data-testid="page-failed">
        <h1>This page could not be loaded</h1>
        <p>The connection dropped, or a newer version of Yumina was published while this tab was open.</p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </section>
    );
  }
}
