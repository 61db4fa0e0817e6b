import { safeReturnTo } from '@yumina/identity/browser';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, type ApiError } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { takeLinkToken } from './link-token.ts';

type Outcome = { kind: 'done'; email: string; returnTo: string } | { kind: 'refused'; message: string };

/** /complete-signup#token=…: the link of a sign-up mail, used once: creates the account and signs this browser in. */
export function CompleteSignupPage() {
  useTitle(['Finish creating your account']);
  const { refresh } = useSession();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = takeLinkToken();
    if (!token) {
      setOutcome({ kind: 'refused', message: 'This page needs the whole link from the mail. Open it again from the mail, or send a new link.' });
      return;
    }
    api<{ account: { email: string }; returnTo: string | null }>('/api/auth/signup/complete', { json: { token } }).then(
      async (r) => {
        await refresh();
        const returnTo = safeReturnTo(r.returnTo ?? '/app/settings', window.location.origin, '/app/settings');
        setOutcome({ kind: 'done', email: r.account.email, returnTo });
      },
      (err: ApiError) => setOutcome({ kind: 'refused', message: err.message }),
    );
  }, [refresh]);

  return (
    <section className="card narrow" aria-live="polite">
      <h1>Your account</h1>
      {!outcome && <p>Checking the link…</p>}
      {outcome?.kind === 'done' && (
        <>
          <p role="status" data-testid="signup-done">
            Welcome: your account for {outcome.email} is ready, and you are signed in.
          </p>
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
