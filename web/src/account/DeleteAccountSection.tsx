import { type FormEvent, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useAccount } from './use-account.ts';

/**
 * Settings → Delete account: a dialog that asks for the password (an account without one must have
 * signed in within the last 15 minutes; the server says so otherwise). The login alone never deletes
 * an account (issue 43, point 7).
 */
export function DeleteAccountSection() {
  const { view } = useAccount();
  const dialog = useRef<HTMLDialogElement>(null);
  const open = () => dialog.current?.showModal();
  return (
    <section className="card" id="delete-account" aria-labelledby="delete-account-title">
      <h3 id="delete-account-title">Delete account</h3>
      <p className="hint">Deletes your account, your worlds, sessions, personas and uploaded pictures. This cannot be undone.</p>
      <div className="row">
        <button type="button" className="danger" onClick={open} disabled={!view}>
          Delete my account…
        </button>
      </div>
      <dialog ref={dialog} className="confirm-dialog" aria-labelledby="delete-dialog-title">
        {view && <DeleteForm hasPassword={view.hasPassword} close={() => dialog.current?.close()} />}
      </dialog>
    </section>
  );
}

function DeleteForm({ hasPassword, close }: { hasPassword: boolean; close(): void }) {
  const { refresh } = useSession();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const cancel = () => {
    setPassword('');
    setError(null);
    close();
  };
  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await api('/api/account', { method: 'DELETE', json: hasPassword ? { password } : {} });
      close();
      await refresh();
      navigate('/');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} aria-label="Delete the account">
      <h2 id="delete-dialog-title">Delete your account?</h2>
      <p>Everything the account holds goes with it, at once and for good. Download your data first if you want to keep a copy.</p>
      {hasPassword ? (
        <label>
          Your password
          <input name="deletePassword" type="password" autoComplete="current-password" required autoFocus value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
      ) : (
        <p className="hint">You sign in through a provider. For your safety, an account is deleted only within 15 minutes of signing in: if asked, sign out and sign in again, then come back here.</p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="row dialog-actions">
        <button type="button" className="secondary" onClick={cancel}>
          Cancel
        </button>
        <button type="submit" className="danger" disabled={busy}>
          Delete my account
        </button>
      </div>
    </form>
  );
}
