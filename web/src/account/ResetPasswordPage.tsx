import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, ApiError } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { takeLinkToken } from './link-token.ts';
import { useTitle } from '../lib/title.ts';

/** /reset-password#token=…: chooses a new password with a link from a mail (once, within 30 minutes). */
export function ResetPasswordPage() {
  useTitle(['Choose a new password']);
  const { refresh } = useSession();
  const [token, setToken] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const found = takeLinkToken();
    if (!found) {
      setRefused('This page needs the whole link from the mail. Open it again from the mail, or ask for a new link.');
      return;
    }
    // Says at once when the link no longer works, before a password is typed for nothing.
    api('/api/auth/password/reset-check', { json: { token: found } }).then(
      () => setToken(found),
      (err: ApiError) => setRefused(err.message),
    );
  }, []);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password !== confirm) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api('/api/auth/password/reset', { json: { token, password } });
      await refresh();
      navigate('/app/settings?password=reset');
    } catch (err) {
      if (err instanceof ApiError && err.code.startsWith('LINK_')) setRefused(err.message);
      else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card narrow">
      <h1>Choose a new password</h1>
      {refused ? (
        <>
          <p role="alert" data-testid="link-refused">
            {refused}
          </p>
          <p>
            <Link to="/forgot-password">Send a new link</Link>
          </p>
        </>
      ) : !token ? (
        <p>Checking the link…</p>
      ) : (
        <form onSubmit={submit} aria-label="Choose a new password">
          <p className="hint">At least 8 characters. Every other device signed in to your account is signed out.</p>
          <label>
            New password
            <input name="password" type="password" autoComplete="new-password" minLength={8} maxLength={200} required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <label>
            New password again
            <input name="confirm" type="password" autoComplete="new-password" minLength={8} maxLength={200} required value={confirm} onChange={(e) => setConfirm(e.target.value)} />
          </label>
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <button type="submit" disabled={busy}>
            Set the new password
          </button>
        </form>
      )}
    </section>
  );
}
