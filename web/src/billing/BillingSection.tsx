import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { refreshHeader } from '../shell/header-data.ts';
import { shortDateTime } from '../lib/dates.ts';

export interface BillingView {
  plan: string;
  credits: number;
  preference: 'auto' | 'official' | 'private' | 'mix';
  officialAvailable: boolean;
  hasConnection: boolean;
  source: 'official' | 'private' | 'mixed';
  ledger: { kind: string; amount: number; balanceAfter: number; detail: string; at: string }[];
}

const SOURCES: { value: BillingView['preference']; label: string; needsOfficial?: boolean }[] = [
  { value: 'auto', label: 'Automatic: my own connection when I have one, otherwise platform credits' },
  { value: 'private', label: 'My own AI connection only' },
  { value: 'official', label: "The platform's AI, paid with credits", needsOfficial: true },
  { value: 'mix', label: 'Mixed: my connection first, credits for models it does not offer', needsOfficial: true },
];

const SOURCE_NOW: Record<BillingView['source'], string> = {
  official: "the platform's AI (credits)",
  private: 'your own AI connection',
  mixed: 'your connection, then credits',
};

/** Settings → Billing: balance, plan, the source of AI (the billing preference) and the ledger. */
export function BillingSection() {
  const [view, setView] = useState<BillingView | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = useCallback(() => {
    api<BillingView>('/api/billing').then(setView, (e: Error) => setNote(e.message));
  }, []);
  useEffect(load, [load]);
  if (!view) return null;

  async function choose(preference: BillingView['preference']) {
    try {
      await api('/api/billing/preference', { method: 'PUT', json: { preference } });
      setNote('Source of AI saved.');
      load();
      refreshHeader();
    } catch (e) {
      setNote((e as Error).message);
    }
  }

  return (
    <section className="card" id="billing" aria-labelledby="billing-heading">
      <h3 id="billing-heading">Credits and billing</h3>
      <div className="row">
        <p>
          Balance: <strong data-testid="billing-balance">{view.credits}</strong> credits · Plan: <strong>{view.plan}</strong>
        </p>
      </div>
      <p className="hint" data-testid="billing-source">
        Your turns now play on {SOURCE_NOW[view.source]}.
        {!view.officialAvailable && ' This platform has no AI of its own configured: connect your own provider below.'}
      </p>
      <fieldset className="source-choice">
        <legend>Source of AI</legend>
        {SOURCES.filter((s) => !s.needsOfficial || view.officialAvailable).map((s) => (
          <label key={s.value} className="inline">
            <input type="radio" name="billing-source" value={s.value} checked={view.preference === s.value} onChange={() => void choose(s.value)} />
            {s.label}
          </label>
        ))}
      </fieldset>
      <p aria-live="polite" className="hint">
        {note}
      </p>
      <h4>Recent charges and grants</h4>
      {view.ledger.length === 0 ? (
        <p className="hint">No charges yet.</p>
      ) : (
        <table data-testid="ledger">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Credits</th>
              <th scope="col">Balance</th>
            </tr>
          </thead>
          <tbody>
            {view.ledger.map((l, i) => (
              <tr key={`${l.at}-${i}`}>
                <td>{shortDateTime(l.at)}</td>
                <td>{l.kind === 'grant' ? `Grant${l.detail ? `: ${l.detail}` : ''}` : `Charge${l.detail ? `: ${l.detail}` : ''}`}</td>
                <td>{l.amount > 0 && l.kind === 'grant' ? `+${l.amount}` : l.kind === 'charge' ? `-${Math.abs(l.amount)}` : l.amount}</td>
                <td>{l.balanceAfter}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
