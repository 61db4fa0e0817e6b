import { lazy, Suspense, useEffect, useState } from 'react';
import { useTitle } from '../lib/title.ts';

const DevSandboxPage = lazy(() => import('./DevSandboxPage.tsx'));

/**
 * /dev/sandbox, loaded on demand so the sandbox host and its compilers stay out of the main bundle.
 * A server in production mode answers this path with 404 (see containers/api/src/web.ts), and the
 * page asks before it shows itself, so it is not reachable there even by in-app navigation.
 */
export function DevSandboxRoute() {
  useTitle(['Sandbox (development)']);
  const [allowed, setAllowed] = useState<boolean | null>(null);
  useEffect(() => {
    fetch('/dev/sandbox', { headers: { accept: 'text/html' }, credentials: 'same-origin' }).then(
      (res) => setAllowed(res.ok),
      () => setAllowed(false),
    );
  }, []);
  if (allowed === null) return <p>Loading…</p>;
  if (!allowed)
    return (
      <p role="alert" data-testid="not-found">
        Page not found.
      </p>
    );
  return (
    <Suspense fallback={<p>Loading…</p>}>
      <DevSandboxPage />
    </Suspense>
  );
}
