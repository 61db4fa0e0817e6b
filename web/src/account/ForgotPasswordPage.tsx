import { type FormEvent, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useTitle } from '../lib/title.ts';
import { OutboxNote } from './OutboxNote.tsx';

/** /forgot-password: asks for a reset link. The answer is the same whether or not the address has an account. */
export function ForgotPasswordPage() {
  useTitle(['Forgot your password?']);
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setSent((await api<{ message: string }>('/api/auth/password/forgot', { json: { email } })).message);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card narrow">
      <h1>Forgot your password?</h1>
      {sent ? (
        <>
          <p role="status" data-testid="forgot-sent">
            {sent}
          </p>
          <OutboxNote />
        </>
      ) : (
        <form onSubmit={submit} aria-label="Forgot password">
          <p className="hint">Enter the address of your account; we send it a link to choose a new password.</p>
          <label>
            E-mail
            <input name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <button type="submit" disabled={busy}>
            Send the link
          </button>
        </form>
      )}
      <p>
        <Link to="/login">Back to sign in</Link>
      </p>
    </section>
  );
}
