import { type FormEvent, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { OutboxNote } from './OutboxNote.tsx';
import { type AccountView, useAccount } from './use-account.ts';
import { refreshLogins } from './LoginsSection.tsx';

const NO_ADDRESS = /@users\.invalid$/;

/** Settings → Account: the address (verified or not, and a change waiting for its link) and the password. */
export function AccountSection() {
  const { view, error, reload } = useAccount();
  return (
    <section className="card" id="account" aria-labelledby="account-title">
      <h3 id="account-title">Account</h3>
      {error && <p role="alert">{error}</p>}
      {!view ? <p>Loading…</p> : <AccountDetails view={view} reload={reload} />}
    </section>
  );
}

function AccountDetails({ view, reload }: { view: AccountView; reload(): Promise<void> }) {
  const { refresh } = useSession();
  const [message, setMessage] = useState<string | null>(null);
  const { account } = view;
  const noAddress = NO_ADDRESS.test(account.email);
  const resend = () => api<{ message: string }>('/api/auth/email/resend', { json: {} }).then((r) => setMessage(r.message), (e: Error) => setMessage(e.message));
  return (
    <>
      <h4>E-mail address</h4>
      <p data-testid="account-email">
        {noAddress ? (
          <span className="hint">no e-mail address</span>
        ) : (
          <>
            {account.email}{' '}
            {account.emailVerified ? <span className="badge">verified</span> : <span className="badge warn">not verified</span>}
          </>
        )}
      </p>
      {!noAddress && !account.emailVerified && (
        <p className="row">
          <span className="hint">We sent a link to this address. Nothing arrived?</span>
          <button type="button" className="secondary" onClick={resend}>
            Send a new link
          </button>
        </p>
      )}
      {view.pendingEmail && (
        <p className="hint" data-testid="pending-email">
          Waiting for you to follow the link we sent to {view.pendingEmail}; until then your account keeps its address.
        </p>
      )}
      {message && <p role="status">{message}</p>}
      {(message || view.pendingEmail || (!noAddress && !account.emailVerified)) && <OutboxNote />}
      <ChangeEmail needsPassword={view.hasPassword} onDone={reload} notedAbove={!!view.pendingEmail} />
      <h4>Password</h4>
      {view.hasPassword ? (
        <ChangePassword onDone={refresh} />
      ) : (
        <p className="hint">
          You sign in through a provider. To add a password, use <Link to="/forgot-password">Forgot password</Link> with your verified address.
        </p>
      )}
    </>
  );
}

/** `notedAbove`: the section already says where the mail went (a change waiting for its link). */
function ChangeEmail({ needsPassword, onDone, notedAbove }: { needsPassword: boolean; onDone(): Promise<void>; notedAbove: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setMessage(null);
    try {
      const r = await api<{ message: string }>('/api/account/email', { json: { email, ...(needsPassword ? { password } : {}) } });
      setMessage({ ok: true, text: r.message });
      setEmail('');
      setPassword('');
      await onDone();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  }
  return (
    <details>
      <summary>Change the address</summary>
      <form onSubmit={submit} aria-label="Change the e-mail address">
        <label>
          New address
          <input name="newEmail" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        {needsPassword && (
          <label>
            Your password
            <input name="currentPasswordForEmail" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
        )}
        <div className="row">
          <button type="submit">Send a link to the new address</button>
        </div>
        {message && (
          <p role={message.ok ? 'status' : 'alert'} className={message.ok ? undefined : 'error'}>
            {message.text}
          </p>
        )}
        {message?.ok && !notedAbove && <OutboxNote />}
      </form>
    </details>
  );
}

function ChangePassword({ onDone }: { onDone(): Promise<void> }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(
    new URLSearchParams(window.location.search).get('password') === 'reset' ? { ok: true, text: 'Your new password is set, and every other device was signed out.' } : null,
  );
  async function submit(e: FormEvent) {
    e.preventDefault();
    setMessage(null);
    try {
      const r = await api<{ endedSessions: number }>('/api/account/password', { json: { currentPassword: current, newPassword: next } });
      setCurrent('');
      setNext('');
      setMessage({ ok: true, text: `Password changed. ${r.endedSessions === 1 ? 'One other device was' : `${r.endedSessions} other devices were`} signed out.` });
      // The signed-in devices on this page: the ones signed out go from the list.
      refreshLogins();
      await onDone();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  }
  return (
    <form onSubmit={submit} aria-label="Change the password">
      <label>
        Current password
        <input name="currentPassword" type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
      </label>
      <label>
        New password
        <input name="newPassword" type="password" autoComplete="new-password" minLength={8} maxLength={200} required value={next} onChange={(e) => setNext(e.target.value)} />
      </label>
      <div className="row">
        <button type="submit">Change the password</button>
        <span className="hint">Signs out every other device.</span>
      </div>
      {message && (
        <p role={message.ok ? 'status' : 'alert'} className={message.ok ? undefined : 'error'}>
          {message.text}
        </p>
      )}
    </form>
  );
}
