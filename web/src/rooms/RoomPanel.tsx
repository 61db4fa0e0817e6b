/**
 * Beside a room's conversation: the round (its state, the modes, the host's "Reply now" and the
 * turn), the members (online, writing, whose turn, role; the host removes, bars and changes roles),
 * who pays, the host's modes and invite links, the session's variables (a member's own per-player
 * values over the shared ones), and ending or leaving the room.
 */
import { useEffect, useState } from 'react';
import { displayName, formatValue } from '../player/variable-format.ts';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { shortDateTime } from '../lib/dates.ts';
import type { Confirm } from '../player/ConfirmDialog.tsx';
import { payerText, type RoundState, SPEECH_LABELS, type SpeechMode, TRIGGER_LABELS, type TriggerMode } from './room-types.ts';
import type { RoomHandle } from './use-room.ts';

const ROUND_LABELS: Record<RoundState, string> = { waiting: 'Waiting for input', collecting: 'Collecting messages', replying: 'AI replying' };
const SHORT_TRIGGER: Record<TriggerMode, string> = { manual: 'manual', timer: 'timer', round: 'round', instant: 'instant' };
const SHORT_SPEECH: Record<SpeechMode, string> = { free: 'free', turns: 'turn-based' };

/** Seconds until `until`, ticking. */
function useCountdown(until: string | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!until) return;
    const timer = window.setInterval(() => setNow(Date.now()), 500);
    return () => window.clearInterval(timer);
  }, [until]);
  return until ? Math.max(0, Math.ceil((Date.parse(until) - now) / 1000)) : null;
}

function Round({ r }: { r: RoomHandle }) {
  const { room, queue, members, me } = r.snap!;
  const left = useCountdown(room.roundState === 'collecting' && room.triggerMode === 'timer' ? room.collectUntil : null);
  const holder = members.find((m) => m.id === room.turnParticipantId);
  const turnTakers = members.filter((m) => m.role !== 'spectator');
  const holding = room.turnParticipantId !== null && room.turnParticipantId === me.participantId;
  return (
    <section className="card room-round" aria-label="Round">
      <h3>Round</h3>
      <p>
        <strong data-testid="round-state" data-state={room.endedAt ? 'ended' : room.roundState}>
          {room.endedAt ? 'The room has ended' : ROUND_LABELS[room.roundState]}
        </strong>
        {left !== null && <span className="hint"> · the AI replies in {left} s</span>}
        {room.roundState === 'collecting' && queue.length > 0 && <span className="hint"> · {queue.length} waiting</span>}
      </p>
      <p className="hint" data-testid="room-modes">
        AI answers: {SHORT_TRIGGER[room.triggerMode]}
        {room.triggerMode === 'timer' ? ` (${room.timerSeconds} s)` : ''} · speech: {SHORT_SPEECH[room.speechMode]}
      </p>
      {room.speechMode === 'turns' && (
        <p data-testid="turn-holder">
          Turn: <strong>{holder ? (holding ? `${holder.name} (you)` : holder.name) : 'nobody'}</strong>
        </p>
      )}
      {!room.endedAt && (
        <div className="row">
          {r.isHost && (
            <button type="button" disabled={queue.length === 0 || room.roundState === 'replying'} onClick={() => void r.replyNow()}>
              Reply now
            </button>
          )}
          {room.speechMode === 'turns' && !r.isHost && holding && (
            <button type="button" className="secondary" onClick={() => void r.passTurn()}>
              Pass the turn
            </button>
          )}
          {room.speechMode === 'turns' && r.isHost && (
            <label className="row">
              Give the turn to
              <select aria-label="Give the turn to" value={room.turnParticipantId ?? ''} onChange={(e) => void r.passTurn(e.target.value || undefined)}>
                {!holder && <option value="">—</option>}
                {turnTakers.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
      )}
    </section>
  );
}

function Members({ r, confirm }: { r: RoomHandle; confirm: Confirm }) {
  const { members, room, me } = r.snap!;
  const writing = new Set(r.typing);
  return (
    <section className="card" aria-label="Players">
      <h3>Players</h3>
      <ul className="list room-members" data-testid="room-members">
        {members.map((m) => (
          <li key={m.id} data-member={m.name} data-role={m.role} data-online={m.online}>
            <div className="spread">
              <span>
                <span className={`room-dot ${m.online ? 'room-dot-on' : ''}`} aria-hidden="true" />
                <strong>{m.name}</strong>
                {m.id === me.participantId && ' (you)'} <span className={`badge ${m.role === 'host' ? '' : 'muted'}`}>{m.role}</span>
                <span className="visually-hidden">{m.online ? ' online' : ' offline'}</span>
                {room.speechMode === 'turns' && room.turnParticipantId === m.id && <span className="badge warn"> their turn</span>}
                {writing.has(m.id) && <span className="hint"> writing…</span>}
              </span>
              {r.isHost && m.role !== 'host' && !room.endedAt && (
                <span className="row">
                  <select aria-label={`Role of ${m.name}`} value={m.role} onChange={(e) => void r.setRole(m.id, e.target.value as 'player' | 'spectator')}>
                    <option value="player">player</option>
                    <option value="spectator">spectator</option>
                  </select>
                  <button type="button" className="link" onClick={() => confirm(`Remove ${m.name} from the room? They can come back with a new link.`, () => r.kick(m.id, false))}>
                    Remove
                  </button>
                  <button type="button" className="link" onClick={() => confirm(`Remove ${m.name} and bar them? No link lets them back into this room.`, () => r.kick(m.id, true))}>
                    Bar
                  </button>
                </span>
              )}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Modes({ r }: { r: RoomHandle }) {
  const { room } = r.snap!;
  const [seconds, setSeconds] = useState(String(room.timerSeconds));
  useEffect(() => setSeconds(String(room.timerSeconds)), [room.timerSeconds]);
  return (
    <section className="card" aria-label="Modes">
      <h3>Modes</h3>
      <label>
        When the AI answers
        <select aria-label="When the AI answers" value={room.triggerMode} onChange={(e) => void r.setModes({ triggerMode: e.target.value })}>
          {(Object.keys(TRIGGER_LABELS) as TriggerMode[]).map((m) => (
            <option key={m} value={m}>
              {TRIGGER_LABELS[m]}
            </option>
          ))}
        </select>
      </label>
      {room.triggerMode === 'timer' && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void r.setModes({ timerSeconds: Number(seconds) });
          }}
        >
          <label>
            Seconds <input type="number" min={2} max={600} value={seconds} onChange={(e) => setSeconds(e.target.value)} aria-label="Timer seconds" />
          </label>
          <button type="submit" className="secondary">
            Set
          </button>
        </form>
      )}
      <label>
        Who may write
        <select aria-label="Who may write" value={room.speechMode} onChange={(e) => void r.setModes({ speechMode: e.target.value })}>
          {(Object.keys(SPEECH_LABELS) as SpeechMode[]).map((m) => (
            <option key={m} value={m}>
              {SPEECH_LABELS[m]}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}

function Invites({ r }: { r: RoomHandle }) {
  const [role, setRole] = useState<'player' | 'spectator'>('player');
  const [hours, setHours] = useState('168');
  const [made, setMade] = useState<{ url: string; role: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const { loadInvites } = r;
  useEffect(() => {
    void loadInvites();
  }, [loadInvites]);
  const live = (r.invites ?? []).filter((i) => !i.revokedAt && Date.parse(i.expiresAt) > Date.now());
  return (
    <section className="card" aria-label="Invite links">
      <h3>Invite</h3>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setCopied(false);
          setMade(null);
          void r.createInvite(role, Number(hours)).then((url) => setMade(url ? { url, role } : null));
        }}
      >
        <select aria-label="Invite as" value={role} onChange={(e) => setRole(e.target.value as 'player' | 'spectator')}>
          <option value="player">a player</option>
          <option value="spectator">a spectator</option>
        </select>
        <select aria-label="The link works for" value={hours} onChange={(e) => setHours(e.target.value)}>
          <option value="1">1 hour</option>
          <option value="24">1 day</option>
          <option value="168">7 days</option>
        </select>
        <button type="submit">Make a link</button>
      </form>
      {made && (
        <div className="room-invite-made">
          <label>
            Link for {made.role === 'player' ? 'a player' : 'a spectator'} (shown once)
            <input readOnly value={made.url} aria-label="Invite link" data-testid="invite-link" data-role={made.role} onFocus={(e) => e.currentTarget.select()} />
          </label>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              void navigator.clipboard?.writeText(made.url).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
      {live.length > 0 && (
        <ul className="list" data-testid="invite-list">
          {live.map((i) => (
            <li key={i.id} className="spread">
              <span className="hint">
                {i.role} link · until {shortDateTime(i.expiresAt)}
              </span>
              <button type="button" className="link" onClick={() => void r.revokeInvite(i.id)}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface Checkpoint {
  id: string;
  name: string;
  messageCount: number;
}

/** The host's checkpoints and restart of the room's story (every member sees the result at once). */
function Story({ r, confirm }: { r: RoomHandle; confirm: Confirm }) {
  const [checkpoints, setCheckpoints] = useState<Checkpoint[] | null>(null);
  const sessionId = r.snap!.session.id;
  const messages = r.snap!.messages.length;
  useEffect(() => {
    let live = true;
    api<{ checkpoints: Checkpoint[] }>(`/api/sessions/${encodeURIComponent(sessionId)}/checkpoints`).then(
      (c) => live && setCheckpoints(c.checkpoints),
      () => live && setCheckpoints([]),
    );
    return () => {
      live = false;
    };
  }, [sessionId, messages]);
  const list = checkpoints ?? [];
  return (
    <section className="card" aria-label="Story">
      <h3>Story</h3>
      <div className="row">
        <button type="button" className="secondary" onClick={() => void r.session(['checkpoints'], 'POST', { name: `Checkpoint ${list.length + 1}` })}>
          Save a checkpoint
        </button>
        <button type="button" className="secondary" onClick={() => confirm('Restart the story for everyone? The conversation goes back to the greeting and the variables to their defaults.', () => r.session(['restart'], 'POST'))}>
          Restart
        </button>
      </div>
      {list.length > 0 && (
        <ul className="list" data-testid="room-checkpoints">
          {list.map((c) => (
            <li key={c.id} className="spread">
              <span>
                {c.name} <span className="hint">({c.messageCount} messages)</span>
              </span>
              <span className="row">
                <button type="button" className="link" onClick={() => confirm(`Restore "${c.name}" for everyone? Messages after it will be cleared.`, () => r.session(['checkpoints', c.id, 'restore'], 'POST'))}>
                  Restore
                </button>
                <button type="button" className="link" onClick={() => confirm(`Delete the checkpoint "${c.name}"?`, () => r.session(['checkpoints', c.id], 'DELETE'))}>
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The session's variables as this member sees them: the shared values, with their own per-player ones over them (marked). */
function Variables({ r }: { r: RoomHandle }) {
  const s = r.snap!;
  const defs = r.world?.world.variables ?? [];
  const shared = s.session.state.variables ?? {};
  const own = s.session.state.playerVariables?.[s.me.accountId] ?? {};
  const ids = [...new Set([...defs.map((d) => d.id), ...Object.keys(shared), ...Object.keys(own)])];
  if (ids.length === 0) return null;
  return (
    <section className="card player-panel" aria-label="Variables">
      <h3>Variables</h3>
      <dl data-testid="room-variables">
        {ids.map((id) => {
          const mine = Object.hasOwn(own, id);
          const name = displayName(defs.find((d) => d.id === id), id);
          return (
            <div key={id} data-variable={id} data-own={mine}>
              <dt>{name}</dt>
              <dd>
                {formatValue(mine ? own[id] : shared[id])}
                {mine && <span className="hint"> (yours only)</span>}
              </dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}

export function RoomPanel({ r, confirm }: { r: RoomHandle; confirm: Confirm }) {
  const s = r.snap!;
  const ended = !!s.room.endedAt;
  return (
    <aside className="room-panel">
      <Round r={r} />
      <Members r={r} confirm={confirm} />
      <p className="hint room-payer" data-testid="room-payer">
        {payerText(s.payer)}
      </p>
      {r.isHost && !ended && <Modes r={r} />}
      {r.isHost && !ended && <Invites r={r} />}
      {r.isHost && !ended && <Story r={r} confirm={confirm} />}
      <Variables r={r} />
      <div className="row">
        <Link to={`/worlds/${encodeURIComponent(s.room.worldId)}`} className="button secondary">
          The world’s page
        </Link>
        {r.isHost && !ended && (
          <button type="button" className="danger" onClick={() => confirm('End the room for everyone? Nothing new can be written; the conversation stays readable.', () => r.end())}>
            End the room
          </button>
        )}
        {!r.isHost && (
          <button type="button" className="secondary" onClick={() => confirm('Leave this room? You can come back only with a new link.', () => r.leave().then(() => window.location.assign(`/worlds/${encodeURIComponent(s.room.worldId)}`)))}>
            Leave the room
          </button>
        )}
      </div>
    </aside>
  );
}
