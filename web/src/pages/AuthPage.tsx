import { safeReturnTo } from '@yumina/identity/browser';
import { type FormEvent, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { OutboxNote } from '../account/OutboxNote.tsx';

/** Sign-up and login with e-mail and password, plus the configured OAuth providers. */
export function AuthPage({ mode }: { mode: 'login' | 'signup' }) {
  useTitle([mode === 'signup' ? 'Create your account' : 'Sign in']);
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Sign-up answers the same for every address and signs nobody in: the mailed link finishes it.
  const [sentTo, setSentTo] = useState<string | null>(null);
  const params = new URLSearchParams(window.location.search);
  // Same-origin paths only (the one check shared with the server: @yumina/identity return-path.ts).
  const returnTo = safeReturnTo(params.get('returnTo') ?? '/app/settings', window.location.origin, '/app/settings');

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === 'signup') {
        await api('/api/auth/signup', { json: { email, password, returnTo, ...(displayName ? { displayName } : {}) } });
        setSentTo(email.trim());
        setPassword('');
        return;
      }
      await api('/api/auth/login', { json: { email, password } });
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

  if (sentTo) return <CheckInbox email={sentTo} onBack={() => setSentTo(null)} />;

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
        {mode === 'signup' && <p className="hint">We send a link to this address; your account is created when you follow it.</p>}
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

/** After a sign-up: the mail is on its way; it can be sent again (limited per address and per client). */
export function CheckInbox({ email, onBack }: { email: string; onBack: () => void }) {
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function resend() {
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      await api('/api/auth/signup/resend', { json: { email } });
      setSent('Sent again. Earlier links no longer work: use the newest mail.');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section className="card narrow" aria-live="polite">
      <h2>Check your inbox</h2>
      <p data-testid="signup-sent">
        We sent a mail to <strong>{email}</strong>. Follow its link within 24 hours to finish creating your account; it signs you in.
      </p>
      <OutboxNote />
      <p className="hint">Nothing arrived? Look in your spam folder, or send it again. If this address already has an account, the mail says so instead.</p>
      <div className="row">
        <button type="button" onClick={resend} disabled={busy}>
          Send the mail again
        </button>
        <button type="button" className="secondary" onClick={onBack}>
          Use another address
        </button>
      </div>
      {sent && <p role="status">{sent}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </section>
  );
}
