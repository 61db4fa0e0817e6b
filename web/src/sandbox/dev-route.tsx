import { lazy, Suspense } from 'react';

const DevSandboxPage = lazy(() => import('./DevSandboxPage.tsx'));

/** /dev/sandbox, loaded on demand so the sandbox host and its compilers stay out of the main bundle. */
export function DevSandboxRoute() {
  return (
    <Suspense fallback={<p>Loading…</p>}>
      <DevSandboxPage />
    </Suspense>
  );
}
