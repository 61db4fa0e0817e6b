import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';

interface Login {
  id: string;
  device: string;
  address: string | null;
  signedInAt: string;
  lastSeenAt: string;
  current: boolean;
}

const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** What ends logins elsewhere on the page (a password change) asks the list to look again. */
export const refreshLogins = () => window.dispatchEvent(new Event('yumina:logins'));

/** Settings → Signed-in devices: every live login of the account; end any, or all but this one. */
export function LoginsSection() {
  const { refresh } = useSession();
  const [logins, setLogins] = useState<Login[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const reload = useCallback(() => api<{ logins: Login[] }>('/api/account/logins').then((r) => setLogins(r.logins), (e: Error) => setMessage(e.message)), []);
  useEffect(() => {
    void reload();
    const again = () => void reload();
    window.addEventListener('yumina:logins', again);
    return () => window.removeEventListener('yumina:logins', again);
  }, [reload]);

  async function end(login: Login) {
    if (login.current && !window.confirm('End this login? You will be signed out here.')) return;
    try {
      await api(`/api/account/logins/${login.id}`, { method: 'DELETE' });
      if (login.current) {
        await refresh();
        navigate('/login');
        return;
      }
      setMessage(`Signed out ${login.device}.`);
      await reload();
    } catch (err) {
      setMessage((err as Error).message);
    }
  }
  async function endOthers() {
    try {
      const r = await api<{ ended: number }>('/api/account/logins/end-others', { json: {} });
      setMessage(r.ended ? `Signed out ${r.ended === 1 ? 'one other device' : `${r.ended} other devices`}.` : 'No other device was signed in.');
      await reload();
    } catch (err) {
      setMessage((err as Error).message);
    }
  }

  return (
    <section className="card" id="logins" aria-labelledby="logins-title">
      <h3 id="logins-title">Signed-in devices</h3>
      <p className="hint">Every place your account is signed in. Sign out any you do not recognise, and change your password.</p>
      {!logins ? (
        <p>Loading…</p>
      ) : (
        <ul className="list" data-testid="logins">
          {logins.map((l) => (
            <li key={l.id} className="spread">
              <span>
                <strong>{l.device}</strong> {l.current && <span className="badge">this device</span>}
                <br />
                <span className="hint">
                  {l.address ?? 'unknown address'} · last used {when(l.lastSeenAt)} · signed in {when(l.signedInAt)}
                </span>
              </span>
              <button type="button" className="secondary" onClick={() => end(l)} aria-label={`Sign out ${l.device}${l.current ? ' (this device)' : ''}, last used ${when(l.lastSeenAt)}`}>
                Sign out
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="button" onClick={endOthers} disabled={!logins || logins.length < 2}>
          Sign out everywhere else
        </button>
      </div>
      {message && <p role="status">{message}</p>}
    </section>
  );
}
