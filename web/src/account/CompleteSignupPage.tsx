import { safeReturnTo } from '@yumina/identity/browser';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, type ApiError } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { takeLinkToken } from './link-token.ts';

type Outcome = { kind: 'done'; email: string; returnTo: string; firstAdministrator: boolean } | { kind: 'refused'; message: string };

/**
 * /complete-signup#token=…: the link of a sign-up mail. Asks for the password chosen at sign-up
 * (whoever follows a mail they did not ask for cannot finish a stranger's sign-up), then creates the
 * account and signs this browser in. A wrong password keeps the form (the link allows five tries).
 */
export function CompleteSignupPage() {
  useTitle(['Finish creating your account']);
  const { refresh } = useSession();
  const [token, setToken] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [wrong, setWrong] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const started = useRef(false);
  useEffect(() => {
    // Read once, after the page is committed (the token leaves the address bar as it is read).
    if (started.current) return;
    started.current = true;
    const found = takeLinkToken();
    if (found) setToken(found);
    else setOutcome({ kind: 'refused', message: 'This page needs the whole link from the mail. Open it again from the mail, or send a new link.' });
  }, []);
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!token) return;
    setBusy(true);
    setWrong(null);
    try {
      const r = await api<{ account: { email: string }; returnTo: string | null; firstAdministrator?: boolean }>('/api/auth/signup/complete', { json: { token, password } });
      await refresh();
      const returnTo = safeReturnTo(r.returnTo ?? '/app/settings', window.location.origin, '/app/settings');
      setOutcome({ kind: 'done', email: r.account.email, returnTo, firstAdministrator: r.firstAdministrator === true });
    } catch (err) {
      const e = err as ApiError;
      if (e.code === 'WRONG_PASSWORD') setWrong(e.message);
      else setOutcome({ kind: 'refused', message: e.message });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card narrow" aria-live="polite">
      <h1>Your account</h1>
      {!outcome && !token && <p>Checking the link…</p>}
      {!outcome && token && (
        <form onSubmit={submit} aria-label="Finish creating your account">
          <p>To finish, type the password you chose when you signed up.</p>
          <label>
            Password
            <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} aria-invalid={wrong !== null} aria-describedby={wrong ? 'signup-wrong-password' : undefined} />
          </label>
          {wrong && (
            <p className="error" role="alert" id="signup-wrong-password">
              {wrong}
            </p>
          )}
          <button type="submit" disabled={busy}>
            {busy ? 'Creating your account…' : 'Finish creating my account'}
          </button>
        </form>
      )}
      {outcome?.kind === 'done' && (
        <>
          <p role="status" data-testid="signup-done">
            Welcome: your account for {outcome.email} is ready, and you are signed in.
          </p>
          {outcome.firstAdministrator && (
            <div className="callout" role="note" data-testid="first-administrator">
              <p>
                <strong>You are this installation’s administrator.</strong> Yours is the first account on a fresh install, so it reviews
                what authors publish: held worlds wait in the <Link to="/admin/reviews">review queue</Link>.
              </p>
            </div>
          )}
          <p>
            <button
              type="button"
              onClick={() => {
                if (outcome.returnTo.startsWith('/app') || outcome.returnTo === '/') navigate(outcome.returnTo);
                else window.location.assign(outcome.returnTo);
              }}
            >
              Continue
            </button>
          </p>
        </>
      )}
      {outcome?.kind === 'refused' && <SendAgain message={outcome.message} />}
    </section>
  );
}

/** A refused link: says why and sends a new one to the address typed here (the same answer for every address). */
function SendAgain({ message }: { message: string }) {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await api('/api/auth/signup/resend', { json: { email } });
      setSent(`If ${email.trim()} is waiting for its link, a new one is on its way. Earlier links no longer work.`);
    } catch (err) {
      setError((err as Error).message);
    }
  }
  return (
    <>
      <p role="alert" data-testid="link-refused">
        {message}
      </p>
      <form onSubmit={submit} aria-label="Send a new link">
        <label>
          E-mail
          <input name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <button type="submit">Send a new link</button>
      </form>
      {sent && <p role="status">{sent}</p>}
      {error && <p className="error">{error}</p>}
      <p>
        Already have an account? <Link to="/login">Sign in</Link>
      </p>
    </>
  );
}
