import { type FormEvent, useState } from 'react';
import { type Account, api, onFilePicked, uploadFile } from '../lib/api.ts';
import { useSession } from '../lib/session.tsx';

/** Settings → Profile: display name, username (partners' rules) and picture (resized by the server). */
export function ProfileSection({ account }: { account: Account }) {
  const { refresh } = useSession();
  const [displayName, setDisplayName] = useState(account.displayName);
  const [username, setUsername] = useState(account.username ?? '');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function save(e: FormEvent) {
    e.preventDefault();
    setMessage(null);
    try {
      await api('/api/account/profile', {
        method: 'PATCH',
        json: { displayName, ...(username && username !== account.username ? { username } : {}) },
      });
      await refresh();
      setMessage({ ok: true, text: 'Profile saved. Partner games show it from your next visit.' });
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  }

  async function upload(file: File) {
    setBusy(true);
    setMessage(null);
    try {
      await uploadFile('/api/account/picture', file);
      await refresh();
      setMessage({ ok: true, text: 'Picture saved.' });
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  }
  async function removePicture() {
    await api('/api/account/picture', { method: 'DELETE' }).then(refresh, (e: Error) => setMessage({ ok: false, text: e.message }));
  }

  return (
    <section className="card" id="profile" aria-labelledby="profile-title">
      <h3 id="profile-title">Profile</h3>
      <div className="profile-picture">
        {account.picture ? (
          <img src={account.picture} alt="Your picture" width={96} height={96} data-testid="profile-picture" />
        ) : (
          <div className="profile-picture-empty" aria-hidden="true">
            {account.displayName.slice(0, 1).toUpperCase()}
          </div>
        )}
        <div className="row">
          <label className="button secondary file-button">
            {account.picture ? 'Change picture' : 'Upload a picture'}
            <input type="file" accept="image/png,image/jpeg,image/gif,image/webp,image/avif" onChange={onFilePicked((file) => void upload(file))} disabled={busy} className="visually-hidden" />
          </label>
          {account.picture && (
            <button type="button" className="link" onClick={removePicture}>
              Remove
            </button>
          )}
          <span className="hint">PNG, JPEG, GIF, WebP or AVIF up to 8 MB; shown as a 256 px square.</span>
        </div>
      </div>
      <form onSubmit={save} aria-label="Profile">
        <label>
          Display name
          <input name="profileDisplayName" required maxLength={60} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </label>
        <label>
          Username
          <input
            name="username"
            pattern="[a-z0-9_]{3,30}"
            minLength={3}
            maxLength={30}
            required={account.username !== null}
            value={username}
            aria-describedby="username-rules"
            onChange={(e) => setUsername(e.target.value.toLowerCase())}
          />
        </label>
        <p className="hint" id="username-rules">
          3–30 lowercase letters, digits or underscores; unique. Partner games receive it with your display name and picture.
        </p>
        <div className="row">
          <button type="submit">Save profile</button>
        </div>
        {message && (
          <p role={message.ok ? 'status' : 'alert'} className={message.ok ? undefined : 'error'}>
            {message.text}
          </p>
        )}
      </form>
    </section>
  );
}
