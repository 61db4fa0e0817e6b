import { safeReturnTo } from '@yumina/identity/browser';
import { type FormEvent, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';

/** Sign-up and login with e-mail and password, plus the configured OAuth providers. */
export function AuthPage({ mode }: { mode: 'login' | 'signup' }) {
  useTitle([mode === 'signup' ? 'Create your account' : 'Sign in']);
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const params = new URLSearchParams(window.location.search);
  // Same-origin paths only (the one check shared with the server: @yumina/identity return-path.ts).
  const returnTo = safeReturnTo(params.get('returnTo') ?? '/app/settings', window.location.origin, '/app/settings');

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api(mode === 'signup' ? '/api/auth/signup' : '/api/auth/login', {
        json: mode === 'signup' ? { email, password, ...(displayName ? { displayName } : {}) } : { email, password },
      });
      await refresh();
      // A full navigation when returning to a page outside this app shell (e.g. a partner landing page).
      if (returnTo.startsWith('/app') || returnTo === '/') navigate(returnTo);
      else window.location.assign(returnTo);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card narrow">
      <h2>{mode === 'signup' ? 'Create your account' : 'Sign in'}</h2>
      <form onSubmit={submit} aria-label={mode === 'signup' ? 'Sign up' : 'Sign in'}>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        {mode === 'signup' && (
          <label>
            Display name
            <input name="displayName" maxLength={60} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
          </label>
        )}
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete={mode === 'signup' ? 'new-password' : 'current-password'}
            minLength={mode === 'signup' ? 8 : 1}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {mode === 'signup' ? 'Sign up' : 'Sign in'}
        </button>
        {mode === 'login' && (
          <p>
            <Link to="/forgot-password">Forgot your password?</Link>
          </p>
        )}
        {mode === 'signup' && <p className="hint">We send a link to this address to verify it.</p>}
      </form>
      <p>
        {mode === 'signup' ? (
          <>
            Have an account? <Link to={`/login?returnTo=${encodeURIComponent(returnTo)}`}>Sign in</Link>
          </>
        ) : (
          <>
            New here? <Link to={`/signup?returnTo=${encodeURIComponent(returnTo)}`}>Create an account</Link>
          </>
        )}
      </p>
      <Providers returnTo={returnTo} />
    </section>
  );
}

function Providers({ returnTo }: { returnTo: string }) {
  const [providers, setProviders] = useState<string[]>([]);
  useState(() => {
    api<{ providers: string[] }>('/api/auth/providers').then((r) => setProviders(r.providers), () => {});
  });
  if (!providers.length) return null;
  return (
    <div className="providers">
      {providers.map((p) => (
        <a key={p} className="button secondary" href={`/api/auth/oauth/${p}/start?returnTo=${encodeURIComponent(returnTo)}`}>
          Continue with {p}
        </a>
      ))}
    </div>
  );
}
