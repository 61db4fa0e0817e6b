import { useEffect, useState } from 'react';
import { send } from './server.ts';

/** GET /api/worlds/:id/expected-cost (containers/api/src/worlds/expected-cost.ts). */
interface ExpectedCostBody {
  basis: 'played' | 'estimate';
  turns: number;
  promptTokens: number;
  cachedTokens: number;
  replyTokens: number;
  model: string | null;
  listedPrice: boolean;
  credits: number;
  creditsWithoutCache: number;
}

const n = (v: number) => v.toLocaleString('en');
const credits = (v: number) => `${v.toLocaleString('en', { maximumFractionDigits: 2 })} ${v === 1 ? 'credit' : 'credits'}`;

/**
 * A world's expected cost per turn for its author (issue 47 point 4): the average of its latest
 * played replies, or, before anyone played it, its prompt as assembled for a first turn with the
 * reply at its cap; at the platform's price of its model. Reloaded when the world is saved.
 */
export function ExpectedCost({ worldId, revision }: { worldId: string; revision: number }) {
  const [cost, setCost] = useState<ExpectedCostBody | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void send<ExpectedCostBody>(`/api/worlds/${encodeURIComponent(worldId)}/expected-cost`, 'GET').then((res) => {
      if (!live) return;
      if (res.status === 200) {
        setCost(res.body);
        setError(null);
      } else setError(res.body.error?.message ?? `Could not estimate the cost (${res.status}).`);
    });
    return () => {
      live = false;
    };
  }, [worldId, revision]);
  if (error) return <p className="hint">{error}</p>;
  if (!cost) return null;
  const basis =
    cost.basis === 'played'
      ? `the average of the last ${n(cost.turns)} ${cost.turns === 1 ? 'reply' : 'replies'} played`
      : 'an estimate from its prompt for a first turn, the reply at its length limit';
  const saving = cost.creditsWithoutCache > cost.credits ? ` (${credits(cost.creditsWithoutCache)} without the provider's cache)` : '';
  return (
    <div className="expected-cost" data-testid="expected-cost" data-basis={cost.basis}>
      <p>
        Expected cost per turn: <strong>{credits(cost.credits)}</strong>
        {saving}
      </p>
      <p className="hint">
        {n(cost.promptTokens)} tokens in{cost.cachedTokens > 0 ? ` (${n(cost.cachedTokens)} cached)` : ''} · {n(cost.replyTokens)} out, {basis}
        {cost.model ? `; priced as ${cost.model} on the platform${cost.listedPrice ? '' : ' (default price)'}` : '; the platform has no model of its own configured (default price)'}. Players on their own key pay their provider instead.
      </p>
    </div>
  );
}
