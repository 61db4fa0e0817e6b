import { useCallback, useEffect, useRef, useState } from 'react';
import { readEvents } from '../player/event-stream.ts';
import { type ServerWorld, send } from './server.ts';

/** The studio assistant's data (docs/STUDIO-ASSISTANT.md): its rounds, the one running now, and the author's decisions. */

export interface DiffLine {
  type: '+' | '-' | ' ';
  text: string;
}

export interface CardChange {
  kind: 'add' | 'change' | 'remove';
  target: string;
  summary: string;
  diff: DiffLine[];
}

export interface AssistantStep {
  index: number;
  tokensIn: number;
  tokensOut: number;
  estimated: boolean;
  credits: number;
  source: 'official' | 'private';
  tools: Array<{ name: string; ok: boolean; detail: string }>;
}

export interface AssistantRound {
  id: string;
  kind: 'request' | 'feedback' | 'rollback';
  request: string;
  reply: string;
  status: 'running' | 'proposed' | 'approved' | 'rejected' | 'superseded' | 'answered' | 'stopped' | 'failed';
  changes: CardChange[];
  steps: AssistantStep[];
  reason: string | null;
  error: string | null;
  appliedRevision: number | null;
  canRollback: boolean;
  /** A proposed card that writes interface files: the interface after it, for the sandbox preview (the runtime check). */
  preview: { rootComponent: { entryFile: string; files: Record<string, string>; id?: string }; variables: Record<string, unknown> } | null;
  createdAt: string;
}

export interface RunningRound {
  kind: 'request' | 'feedback';
  request: string;
  steps: AssistantStep[];
}

export function useAssistant(worldId: string, onApplied: (world: ServerWorld) => void) {
  const [rounds, setRounds] = useState<AssistantRound[] | null>(null);
  const [running, setRunning] = useState<RunningRound | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const stopper = useRef<AbortController | null>(null);
  const base = `/api/worlds/${encodeURIComponent(worldId)}/assistant`;

  const load = useCallback(async () => {
    // after a Stop the server ends the round a moment later (when it sees the request go): read again until it has
    for (let attempt = 0; ; attempt++) {
      const res = await send<{ rounds: AssistantRound[] }>(base, 'GET');
      if (res.status !== 200) {
        setError(res.body.error?.message ?? `Could not load the assistant (${res.status}).`);
        return;
      }
      setRounds(res.body.rounds);
      if (!res.body.rounds.some((r) => r.status === 'running') || attempt >= 20) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, [base]);
  useEffect(() => {
    void load();
    return () => stopper.current?.abort();
  }, [load]);

  /** Runs a round: a new request, or a rejection whose reason goes back to the assistant. */
  async function run(body: { request: string } | { reject: { cardId: string; reason: string } }) {
    setError(null);
    const controller = new AbortController();
    stopper.current = controller;
    setRunning({ kind: 'request' in body ? 'request' : 'feedback', request: 'request' in body ? body.request : body.reject.reason, steps: [] });
    try {
      const res = await fetch(`${base}/rounds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
        signal: controller.signal,
      });
      if (!res.ok) {
        const answer = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
        setError(answer.error?.message ?? `The assistant could not start (${res.status}).`);
        return;
      }
      await readEvents(res, (event, data) => {
        if (event === 'step') setRunning((r) => (r ? { ...r, steps: [...r.steps, data as unknown as AssistantStep] } : r));
        else if (event === 'error' && data.code !== 'STOPPED') setError(String(data.message ?? 'The assistant failed.'));
      });
    } catch (err) {
      if (!controller.signal.aborted) setError(`The assistant's answer was cut off (${(err as Error).message}).`);
    } finally {
      stopper.current = null;
      setRunning(null);
      await load();
    }
  }

  /** Stop: the request goes away, and with it the provider's request on the server. */
  const stop = () => stopper.current?.abort();

  async function decide(cardId: string, action: 'approve' | 'reject' | 'rollback', json: Record<string, unknown> = {}) {
    setBusy(true);
    setError(null);
    try {
      const res = await send<{ world?: ServerWorld }>(`${base}/cards/${encodeURIComponent(cardId)}/${action}`, 'POST', json);
      if (res.status !== 200) setError(res.body.error?.message ?? `That did not work (${res.status}).`);
      else if (res.body.world) onApplied(res.body.world);
    } finally {
      setBusy(false);
      await load();
    }
  }

  return {
    rounds,
    running,
    error,
    busy,
    ask: (request: string) => run({ request }),
    rejectAndRevise: (cardId: string, reason: string) => run({ reject: { cardId, reason } }),
    reject: (cardId: string, reason: string) => decide(cardId, 'reject', reason ? { reason } : {}),
    approve: (cardId: string, revision: number) => decide(cardId, 'approve', { revision }),
    rollback: (cardId: string, to: 'after' | 'before') => decide(cardId, 'rollback', { to }),
    stop,
  };
}
