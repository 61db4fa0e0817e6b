/**
 * "Play together" on a world's page (shown when the world's author allows rooms): the host chooses
 * when the AI answers and who may write, sees who pays before the room opens, and opens it.
 */
import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import { payerText, type RoomSnapshot, type RoomTerms, SPEECH_LABELS, type SpeechMode, TRIGGER_LABELS, type TriggerMode } from './room-types.ts';
import './rooms.css';

export function PlayTogetherDialog({ worldId, worldName, onClose }: { worldId: string; worldName: string; onClose(): void }) {
  const [terms, setTerms] = useState<RoomTerms | null>(null);
  const [trigger, setTrigger] = useState<TriggerMode>('round');
  const [seconds, setSeconds] = useState('30');
  const [speech, setSpeech] = useState<SpeechMode>('free');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<RoomTerms>(`/api/worlds/${encodeURIComponent(worldId)}/rooms/terms`).then(setTerms, (err: Error) => setError(err.message));
  }, [worldId]);
  useEffect(() => {
    const close = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', close);
    return () => window.removeEventListener('keydown', close);
  }, [onClose]);

  async function open(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const room = await api<RoomSnapshot>(`/api/worlds/${encodeURIComponent(worldId)}/rooms`, {
        json: { triggerMode: trigger, speechMode: speech, ...(trigger === 'timer' ? { timerSeconds: Number(seconds) } : {}) },
      });
      navigate(`/rooms/${encodeURIComponent(room.room.id)}`);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  }

  return (
    <div className="room-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <form role="dialog" aria-modal="true" aria-labelledby="play-together-title" className="card room-dialog" onSubmit={open}>
        <h2 id="play-together-title">Play {worldName} together</h2>
        <p className="hint">You host the room: you invite friends with a link, and you can change these any time.</p>
        <fieldset>
          <legend>When the AI answers</legend>
          {(Object.keys(TRIGGER_LABELS) as TriggerMode[]).map((m) => (
            <label key={m} className="room-choice">
              <input type="radio" name="triggerMode" value={m} checked={trigger === m} onChange={() => setTrigger(m)} />
              {TRIGGER_LABELS[m]}
            </label>
          ))}
          {trigger === 'timer' && (
            <label>
              Seconds after the first message <input type="number" min={2} max={600} required value={seconds} onChange={(e) => setSeconds(e.target.value)} aria-label="Timer seconds" />
            </label>
          )}
        </fieldset>
        <fieldset>
          <legend>Who may write</legend>
          {(Object.keys(SPEECH_LABELS) as SpeechMode[]).map((m) => (
            <label key={m} className="room-choice">
              <input type="radio" name="speechMode" value={m} checked={speech === m} onChange={() => setSpeech(m)} />
              {SPEECH_LABELS[m]}
            </label>
          ))}
        </fieldset>
        <p data-testid="room-payer-terms" className={terms?.payer.source === 'none' ? 'chat-error' : undefined}>
          <strong>Who pays:</strong> {terms ? payerText(terms.payer) : 'Loading…'}
        </p>
        {terms && (
          <p className="hint">
            Up to {terms.limits.maxPlayers} players (you included) and {terms.limits.maxSpectators} spectators. A player’s credits are never spent by your room.
          </p>
        )}
        {error && <p role="alert">{error}</p>}
        <div className="row">
          <button type="submit" disabled={busy || !terms?.allowed}>
            {busy ? 'Opening…' : 'Open the room'}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
