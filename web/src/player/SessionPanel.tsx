/**
 * Beside the conversation: the world's sessions to switch between (and chats exported or imported), the variables (display names,
 * formatted values), the model of the player's own connection, session memory, checkpoints
 * (restoring or deleting one asks first), volumes and what is playing.
 */
import { apiPath } from '@yumina/sandbox';
import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import type { Confirm } from './ConfirmDialog.tsx';
import { ChatTransfer } from './ChatTransfer.tsx';
import { ModelPicker } from './ModelPicker.tsx';
import type { Player } from './use-player.ts';
import { displayName, formatValue } from './variable-format.ts';
import { shortDate } from '../lib/dates.ts';
import { count } from '../lib/text.ts';
import { sessionSpent } from './reply-price.ts';

function SessionSwitcher({ p, confirm }: { p: Player; confirm: Confirm }) {
  const current = p.data?.session.id ?? '';
  return (
    <div className="player-sessions" aria-label="Sessions">
      <label>
        Session
        <select aria-label="Session" value={current} disabled={p.busy} onChange={(e) => void p.switchSession(e.target.value)}>
          {p.sessions.map((s) => (
            <option key={s.id} value={s.id}>
              {s.title} · {count(s.messageCount, 'message')} · {shortDate(s.updatedAt)}
            </option>
          ))}
        </select>
      </label>
      <button type="button" className="secondary" disabled={p.busy} onClick={() => void p.createSession()}>
        New session
      </button>
      <button
        type="button"
        className="secondary"
        disabled={p.busy || !current}
        onClick={() =>
          confirm('Delete this session and all its messages?', async () => {
            await api(apiPath('sessions', current), { method: 'DELETE' });
            const rest = await p.loadSessions();
            if (rest[0]) await p.switchSession(rest[0].id);
            else await p.createSession();
          })
        }
      >
        Delete session
      </button>
      <SessionTotal p={p} />
    </div>
  );
}

/** What the open session's replies used and cost so far. */
function SessionTotal({ p }: { p: Player }) {
  const spent = sessionSpent(p.data?.session.spent);
  if (!spent) return null;
  return (
    <p className="hint session-spent" data-testid="session-spent-full">
      {spent.full}
    </p>
  );
}

function MemoryEditor({ p }: { p: Player }) {
  const saved = p.data?.session.memory ?? '';
  const [text, setText] = useState(saved);
  const id = p.data?.session.id;
  useEffect(() => setText(saved), [saved, id]);
  return (
    <form
      aria-label="Session memory"
      onSubmit={(e) => {
        e.preventDefault();
        void api(apiPath('sessions', id!, 'memory'), { method: 'PUT', json: { memory: text } }).then(
          () => {
            void p.refresh(id!);
            p.toast('Memory saved.', 'success');
          },
          (err: Error) => p.setError(err.message),
        );
      }}
    >
      <label>
        Memory (the story keeps this in mind)
        <textarea aria-label="Memory" value={text} maxLength={20000} onChange={(e) => setText(e.target.value)} />
      </label>
      <button type="submit" className="secondary" disabled={text === saved}>
        Save memory
      </button>
    </form>
  );
}

export function SessionPanel({ p, confirm }: { p: Player; confirm: Confirm }) {
  if (p.guest) return <GuestPanel p={p} />;
  const variables = p.data?.session.state.variables ?? {};
  const defs = p.world?.world.variables ?? [];
  const playing = p.nowPlaying.map((n) => (p.world?.world.audioTracks ?? []).find((t) => t.id === n.trackId)).filter(Boolean);
  return (
    <aside className="card player-panel" aria-label="Player tools">
      <SessionSwitcher p={p} confirm={confirm} />
      <ChatTransfer p={p} />
      <ModelPicker p={p} />
      <h3>Variables</h3>
      <dl data-testid="variables">
        {Object.entries(variables).map(([k, v]) => {
          const def = defs.find((d) => d.id === k);
          return (
            <div key={k} data-variable={k} title={k}>
              <dt>{displayName(def, k)}</dt>
              <dd>{formatValue(v)}</dd>
            </div>
          );
        })}
      </dl>
      <MemoryEditor p={p} />
      <h3>Checkpoints</h3>
      <button
        type="button"
        className="secondary"
        disabled={p.busy}
        onClick={() => void api(apiPath('sessions', p.data!.session.id, 'checkpoints'), { json: { name: `Checkpoint ${p.checkpoints.length + 1}` } }).then(() => p.refresh(p.data!.session.id))}
      >
        Save checkpoint
      </button>
      <ul className="list" aria-label="Checkpoints">
        {p.checkpoints.map((c) => (
          <li key={c.id}>
            {c.name} ({c.messageCount} messages){' '}
            <button
              type="button"
              className="link"
              onClick={() => confirm(`Restore "${c.name}"? Messages after it will be cleared.`, () => p.action(['checkpoints', c.id, 'restore']))}
            >
              Restore
            </button>{' '}
            <button
              type="button"
              className="link"
              aria-label={`Delete checkpoint ${c.name}`}
              onClick={() => confirm(`Delete the checkpoint "${c.name}"? The conversation stays as it is; only this saved point goes.`, () => p.action(['checkpoints', c.id], 'DELETE'))}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
      <div className="row" aria-label="Volume">
        <label className="inline">
          Music
          <input type="range" min={0} max={1} step={0.05} value={p.volumes.bgm} onChange={(e) => p.setVolumes((v) => ({ ...v, bgm: Number(e.target.value) }))} />
        </label>
        <label className="inline">
          Sounds
          <input type="range" min={0} max={1} step={0.05} value={p.volumes.sfx} onChange={(e) => p.setVolumes((v) => ({ ...v, sfx: Number(e.target.value) }))} />
        </label>
      </div>
      <details>
        <summary>Notifications ({p.notificationLog.length})</summary>
        <ul className="list" aria-label="Notifications">
          {p.notificationLog.map((n) => (
            <li key={n.id} className={`toast-log toast-log-${n.kind}`}>
              {n.message}
            </li>
          ))}
        </ul>
      </details>
      <p className="hint" data-testid="now-playing" data-tracks={p.nowPlaying.map((n) => n.trackId).join(' ')}>
        {playing.length ? `♪ ${playing.map((t) => t!.name ?? t!.id).join(', ')}` : 'No music playing'}
      </p>
    </aside>
  );
}

/** Guest preview: nothing is kept; the variables as they stand, and the way to an account. */
function GuestPanel({ p }: { p: Player }) {
  const variables = p.data?.session.state.variables ?? {};
  const defs = p.world?.world.variables ?? [];
  const returnTo = encodeURIComponent(window.location.pathname);
  return (
    <aside className="card player-panel" aria-label="Player tools">
      <p role="note" data-testid="guest-preview">
        Guest preview: nothing is saved.{' '}
        <a href={`/login?returnTo=${returnTo}`}>Sign in</a> or <a href={`/signup?returnTo=${returnTo}`}>create an account</a> to keep playing.
      </p>
      {!p.guest?.canSendMessage && <p className="hint">Guests cannot talk with worlds on this server.</p>}
      <h3>Variables</h3>
      <dl data-testid="variables">
        {Object.entries(variables).map(([k, v]) => (
          <div key={k} data-variable={k} title={k}>
            <dt>{displayName(defs.find((d) => d.id === k), k)}</dt>
            <dd>{formatValue(v)}</dd>
          </div>
        ))}
      </dl>
    </aside>
  );
}
