import { Link } from '../lib/router.tsx';
import { useTitle } from '../lib/title.ts';

/** The page for unknown addresses and for ids that name nothing. */
export function NotFound({ what = 'page' }: { what?: string }) {
  useTitle(['Not found']);
  return (
    <section className="card" data-testid="not-found">
      <h1>Not found</h1>
      <p>
        There is no {what} at <code>{window.location.pathname}</code>. It may have been removed, or the address has a typo.
      </p>
      <p className="row">
        <Link to="/" className="button">
          Go home
        </Link>
        <Link to="/library" className="button secondary">
          Browse the library
        </Link>
      </p>
    </section>
  );
}
