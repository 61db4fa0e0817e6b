/**
 * A message's comforts in the default chat (issue 50): read aloud (./voice.ts), a translation
 * into the player's language shown beside the original, and, beside "What was sent", how much of
 * the model's context the last prompt used.
 */
import { apiPath } from '@yumina/sandbox';
import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { comfort, translationLanguage } from './comfort.ts';
import type { PlayerMessage } from './player-types.ts';
import { readAloud, reading, stopReading } from './reading.ts';
import type { AuthorVoice } from './voice.ts';

/** Whether `messageId` is being read aloud now (re-renders when the reading starts or ends). */
export function useReading(messageId: string): boolean {
  const [now, setNow] = useState(reading.current === messageId);
  useEffect(() => reading.subscribe((id) => setNow(id === messageId)), [messageId]);
  return now;
}

export function ReadAloudButton(props: { sessionId: string; message: PlayerMessage; character: string; author: AuthorVoice | undefined; onError(message: string): void }) {
  const { sessionId, message: m, character, author, onError } = props;
  const now = useReading(m.id);
  return (
    <button
      type="button"
      className="link"
      aria-pressed={now}
      onClick={() => {
        if (now) stopReading();
        else void readAloud({ sessionId, messageId: m.id, text: m.content, character, author, comfort: comfort() }).catch((e: Error) => onError(e.message));
      }}
    >
      {now ? 'Stop reading' : 'Read aloud'}
    </button>
  );
}

export interface Translation {
  content: string;
  language: string;
  tag: string;
}

/** Translate / Hide translation, and the translation's state for the bubble to show. */
export function useTranslation(sessionId: string, messageId: string, onError: (message: string) => void) {
  const [translation, setTranslation] = useState<Translation | null>(null);
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    if (translation) return setTranslation(null);
    const tag = translationLanguage(comfort());
    setBusy(true);
    try {
      const answer = await api<{ content: string; language: string }>(apiPath('sessions', sessionId, 'messages', messageId, 'translate'), { method: 'POST', json: { language: tag } });
      setTranslation({ ...answer, tag });
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { translation, busy, toggle };
}

/**
 * How much of the model's context the last prompt used: the provider's count of the prompt's
 * tokens against the world's context window (its maxContext setting, what the prompt is fitted to).
 */
export function ContextGauge({ used, window: size }: { used: number; window: number }) {
  const share = Math.min(1, used / size);
  const percent = share * 100;
  const text = `${used.toLocaleString('en')} of ${size.toLocaleString('en')} tokens (${percent < 1 ? percent.toFixed(1) : Math.round(percent)}%)`;
  return (
    <span className="context-gauge" data-testid="context-gauge" title="How much of the model's context the last prompt used">
      <meter aria-label="Context used by the last prompt" min={0} max={size} low={size * 0.7} high={size * 0.9} optimum={0} value={Math.min(used, size)} aria-valuetext={text} />
      <span>{text}</span>
    </span>
  );
}
