/**
 * "What was sent" for the player's own turn: the prompt the reply was written from, in the order
 * the engine built it (its steps), with the entries that fired and why, and those that would have
 * applied but did not. Read from GET /api/sessions/:id/messages/:messageId/prompt (the session's
 * owner only). The conversation's own messages show as their count: they are above, in the chat.
 */
import { apiPath } from '@yumina/sandbox';
import type { FiredEntry, SkippedEntry } from '@yumina/world';
import { useEffect, useRef, useState } from 'react';
import { api } from '../lib/api.ts';

interface SentMessage {
  role: 'system' | 'user' | 'assistant';
  step: number;
  source: string;
  content: string | null;
}

interface SentPromptAnswer {
  prompt: {
    model: string;
    builtAt: string;
    tokenCount: number;
    droppedHistory: number;
    historyCount: number;
    messages: SentMessage[];
    firedEntries: FiredEntry[];
    skippedEntries: SkippedEntry[];
  };
}

const STEP_NAMES: Record<number, string> = {
  1: 'System presets',
  2: 'Persona',
  3: 'Output format',
  4: 'Example dialogue',
  6: 'Lore',
  7: 'New chat',
  8: 'Story summary',
  9: 'Session memory',
  10: 'Conversation',
  11: 'One-time context',
  12: 'State',
  13: 'After the conversation',
};

function why(entry: FiredEntry): string {
  if (entry.via === 'keyword') return `keyword “${entry.keyword ?? ''}” in the recent messages`;
  if (entry.via === 'recursion') return `keyword “${entry.keyword ?? ''}” in another entry's text`;
  if (entry.via === 'conditions') return 'its variable conditions hold';
  return 'always sent';
}

/** Consecutive conversation messages whose text is in the chat already fold into one line. */
function rows(messages: SentMessage[]): (SentMessage | { folded: number; step: number })[] {
  const out: (SentMessage | { folded: number; step: number })[] = [];
  for (const m of messages) {
    const prev = out.at(-1);
    if (m.content === null && prev && 'folded' in prev) prev.folded++;
    else if (m.content === null) out.push({ folded: 1, step: m.step });
    else out.push(m);
  }
  return out;
}

export function SentPromptDialog({ sessionId, messageId, onClose }: { sessionId: string; messageId: string; onClose(): void }) {
  const [answer, setAnswer] = useState<SentPromptAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    closeRef.current?.focus();
    api<SentPromptAnswer>(apiPath('sessions', sessionId, 'messages', messageId, 'prompt')).then(setAnswer, (e: Error) => setError(e.message));
  }, [sessionId, messageId]);
  const prompt = answer?.prompt;
  return (
    <div className="confirm-backdrop" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div role="dialog" aria-modal="true" aria-labelledby="sent-prompt-title" className="card sent-prompt" data-testid="sent-prompt">
        <div className="row sent-prompt-head">
          <h3 id="sent-prompt-title">What was sent</h3>
          <button type="button" className="secondary" ref={closeRef} onClick={onClose}>
            Close
          </button>
        </div>
        {error && <p role="alert">{error}</p>}
        {!prompt && !error && <p className="hint">Loading…</p>}
        {prompt && (
          <>
            <p className="hint">
              To {prompt.model} · about {prompt.tokenCount.toLocaleString('en')} tokens · {prompt.historyCount} messages of the conversation
              {prompt.droppedHistory > 0 ? ` (the ${prompt.droppedHistory} oldest left out for the context budget)` : ''}
            </p>
            <h4>Entries that fired</h4>
            <ul className="list" data-testid="fired-entries">
              {prompt.firedEntries.map((e) => (
                <li key={e.entryId} data-entry={e.entryId} data-via={e.via}>
                  <strong>{e.name}</strong> — {why(e)} <span className="hint">({STEP_NAMES[e.step] ?? `step ${e.step}`})</span>
                </li>
              ))}
            </ul>
            {prompt.skippedEntries.length > 0 && (
              <>
                <h4>Entries left out</h4>
                <ul className="list" data-testid="skipped-entries">
                  {prompt.skippedEntries.map((e) => (
                    <li key={`${e.entryId}:${e.message}`}>{e.message}</li>
                  ))}
                </ul>
              </>
            )}
            <h4>The prompt, in order</h4>
            <ol className="sent-prompt-messages" data-testid="sent-messages">
              {rows(prompt.messages).map((m, i) =>
                'folded' in m ? (
                  <li key={i} className="hint">
                    {m.folded} earlier {m.folded === 1 ? 'message' : 'messages'} of the conversation (shown in the chat)
                  </li>
                ) : (
                  <li key={i} data-source={m.source}>
                    <span className="badge">{m.role}</span> <span className="hint">{STEP_NAMES[m.step] ?? `step ${m.step}`} · {m.source}</span>
                    <pre>{m.content}</pre>
                  </li>
                ),
              )}
            </ol>
          </>
        )}
      </div>
    </div>
  );
}
