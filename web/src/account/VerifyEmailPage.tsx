import { useEffect, useRef, useState } from 'react';
import { api, ApiError } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { takeLinkToken } from './link-token.ts';
import { useTitle } from '../lib/title.ts';

type Outcome = { kind: 'done'; purpose: 'verified' | 'changed'; email: string } | { kind: 'refused'; message: string };

/** /verify-email#token=…: a verification (or address change) link from a mail, used once. */
export function VerifyEmailPage() {
  useTitle(['E-mail address']);
  const { info, refresh } = useSession();
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
    api<{ purpose: 'verified' | 'changed'; email: string }>('/api/auth/email/verify', { json: { token } }).then(
      (r) => {
        setOutcome({ kind: 'done', ...r });
        void refresh();
      },
      (err: ApiError) => setOutcome({ kind: 'refused', message: err.message }),
    );
  }, [refresh]);

  return (
    <section className="card narrow" aria-live="polite">
      <h1>E-mail address</h1>
      {!outcome && <p>Checking the link…</p>}
      {outcome?.kind === 'done' && (
        <>
          <p role="status" data-testid="verify-done">
            {outcome.purpose === 'verified' ? `Thank you: ${outcome.email} is verified.` : `Done: your account now uses ${outcome.email}.`}
          </p>
          <p>
            <Link to={info?.account ? '/app/settings' : '/login'}>{info?.account ? 'Back to settings' : 'Sign in'}</Link>
          </p>
        </>
      )}
      {outcome?.kind === 'refused' && <Refused message={outcome.message} signedIn={!!info?.account} />}
    </section>
  );
}

function Refused({ message, signedIn }: { message: string; signedIn: boolean }) {
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <p role="alert" data-testid="link-refused">
        {message}
      </p>
      {signedIn ? (
        <div className="row">
          <button type="button" onClick={() => api<{ message: string }>('/api/auth/email/resend', { json: {} }).then((r) => setSent(r.message), (e: Error) => setError(e.message))}>
            Send a new link
          </button>
          <Link to="/app/settings">Settings</Link>
        </div>
      ) : (
        <p>
          <Link to={`/login?returnTo=${encodeURIComponent('/app/settings#account')}`}>Sign in</Link> to send a new link from Settings.
        </p>
      )}
      {sent && <p role="status">{sent}</p>}
      {error && <p className="error">{error}</p>}
    </>
  );
}
