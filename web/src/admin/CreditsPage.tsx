import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { refreshHeader } from '../shell/header-data.ts';
import { useTitle } from '../lib/title.ts';

/** `/admin/credits`: an administrator grants platform credits to an account named by e-mail, account id or name. */
export function CreditsPage() {
  useTitle(['Grant credits']);
  const { loading, info } = useSession();
  const [account, setAccount] = useState('');
  const [amount, setAmount] = useState('100');
  const [reason, setReason] = useState('');
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent('/admin/credits')}`);
  }, [loading, info]);
  if (loading || !info?.account) return <p>Loading…</p>;
  if (!info.account.isAdmin) return <p role="alert">Only administrators can see this page.</p>;

  async function grant(e: FormEvent) {
    e.preventDefault();
    const n = Number(amount);
    if (!window.confirm(`Grant ${n} credits to ${account}?`)) return;
    try {
      const r = await api<{ credits: number; account: { id: string; email: string; displayName: string } }>('/api/admin/credits', {
        json: { account: account.trim(), amount: n, reason: reason.trim() },
      });
      setResult({ ok: true, text: `Granted ${n} credits to ${r.account.displayName} <${r.account.email}> (${r.account.id}); balance now ${r.credits}.` });
      setReason('');
      refreshHeader();
    } catch (err) {
      setResult({ ok: false, text: (err as Error).message });
    }
  }

  return (
    <div className="admin">
      <h1>Grant credits</h1>
      <form className="card" onSubmit={grant} aria-label="Grant credits">
        <label>
          Account (e-mail, account id or name)
          <input value={account} onChange={(e) => setAccount(e.target.value)} required autoComplete="off" />
        </label>
        <label>
          Credits
          <input type="number" min={1} max={1000000} value={amount} onChange={(e) => setAmount(e.target.value)} required />
        </label>
        <label>
          Reason (kept in the ledger)
          <input value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={500} />
        </label>
        <button type="submit">Grant</button>
      </form>
      {result && (
        <p role={result.ok ? 'status' : 'alert'} data-testid="grant-result">
          {result.text}
        </p>
      )}
    </div>
  );
}
