/**
 * A room's conversation: every message under its writer's name, the reply as it is written, the
 * round's waiting messages, who is writing, and the composer (a player's or the host's; a
 * spectator reads along, and in a turn-based room only the turn's holder writes). The host's tools
 * on the last reply: regenerate, continue, stop; a failed round's notice carries the host's retry.
 */
import { type AssetScope, assetIdOf, resolveAssetUrl } from '@yumina/sandbox';
import { characterName } from '@yumina/world';
import { displayedText } from '@yumina/world/directives';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { renderMarkdown } from '../sandbox/frame/markdown.ts';
import { TurnFailure } from '../player/TurnFailure.tsx';
import type { Confirm } from '../player/ConfirmDialog.tsx';
import type { RoomMessage } from './room-types.ts';
import type { RoomHandle } from './use-room.ts';

const chatHtml = (text: string, scope: AssetScope | null) => renderMarkdown(text, { image: (ref) => (scope && assetIdOf(ref) ? resolveAssetUrl(ref, scope) : null) });

function Avatar({ name, own }: { name: string; own: boolean }) {
  return (
    <span className={`chat-avatar ${own ? 'room-avatar-own' : ''}`} aria-hidden="true">
      {(name.trim()[0] ?? '?').toUpperCase()}
    </span>
  );
}

/** Why this member cannot write now, or null when they can. */
export function writeBlock(r: RoomHandle): string | null {
  const s = r.snap!;
  if (s.room.endedAt) return 'This room has ended.';
  if (s.me.role === 'spectator') return 'You are a spectator: you read along, the players write.';
  if (s.room.speechMode === 'turns' && s.room.turnParticipantId !== s.me.participantId) {
    const holder = s.members.find((m) => m.id === s.room.turnParticipantId);
    return holder ? `It is ${holder.name}’s turn to write.` : 'Nobody holds the turn: the host hands it to someone.';
  }
  return null;
}

/** The host's tools on a message: edit and delete; on the last reply regenerate, continue and its alternatives. */
function HostTools(props: { r: RoomHandle; m: RoomMessage; last: boolean; disabled: boolean; onEdit(): void; confirm: Confirm }) {
  const { r, m, last, disabled, onEdit, confirm } = props;
  const reply = m.role === 'assistant';
  return (
    <div className="chat-tools">
      <button type="button" className="link" disabled={disabled} onClick={onEdit}>
        Edit
      </button>
      <button type="button" className="link" disabled={disabled} onClick={() => confirm('Delete this message and everything after it, for everyone?', () => r.session(['messages', m.id], 'DELETE'))}>
        Delete
      </button>
      {reply && last && (
        <>
          <button type="button" className="link" disabled={disabled} onClick={() => void r.regenerate()}>
            Regenerate
          </button>
          <button type="button" className="link" disabled={disabled} onClick={() => void r.continueReply()}>
            Continue
          </button>
          {m.swipes.length > 1 && (
            <span className="row" aria-label="Alternatives">
              <button type="button" className="link" aria-label="Previous alternative" disabled={disabled || m.activeSwipeIndex === 0} onClick={() => void r.session(['swipe', 'left'], 'POST')}>
                ‹
              </button>
              <span className="hint">
                {m.activeSwipeIndex + 1}/{m.swipes.length}
              </span>
              <button type="button" className="link" aria-label="Next alternative" disabled={disabled || m.activeSwipeIndex >= m.swipes.length - 1} onClick={() => void r.session(['swipe', 'right'], 'POST')}>
                ›
              </button>
            </span>
          )}
        </>
      )}
    </div>
  );
}

export function RoomChat({ r, scope, confirm }: { r: RoomHandle; scope: AssetScope | null; confirm: Confirm }) {
  const s = r.snap!;
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const { draft, setDraft } = r;
  const [sending, setSending] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  const worldName = r.world ? characterName(r.world.world) : 'World';
  const variableIds = (r.world?.world.variables ?? []).map((v) => v.id);
  const blocked = writeBlock(r);
  const replying = s.room.roundState === 'replying';
  const lastIndex = s.messages.length - 1;
  const lastUserIndex = s.messages.map((m) => m.role).lastIndexOf('user');
  const writers = r.typing.map((id) => s.members.find((m) => m.id === id)?.name).filter((n): n is string => !!n);

  // The newest message stays in view as the conversation grows.
  const streamedLength = r.streaming?.text.length ?? 0;
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [s.messages.length, streamedLength, s.queue.length]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const content = draft.trim();
    if (!content || sending) return;
    setSending(true);
    if (await r.send(content)) setDraft('');
    setSending(false);
  }

  const textOf = (m: RoomMessage) => {
    if (m.status === 'streaming' && r.streaming?.messageId === m.id) return displayedText(r.streaming.base + r.streaming.text, variableIds, { partial: true });
    return m.content;
  };

  return (
    <section className="card room-chat" aria-label="Conversation">
      <ol className="chat-list room-messages" ref={list} data-testid="room-messages" tabIndex={0} aria-label="Messages">
        {s.messages.map((m, i) => {
          const mine = m.role === 'user' && !!m.participantId && m.participantId === s.me.participantId;
          const name = m.role === 'user' ? (m.authorName ?? 'Player') : m.role === 'assistant' ? worldName : 'System';
          const text = textOf(m);
          const failure = m.failure ?? (m.role === 'user' && i === lastIndex && m.status === 'failed' ? { code: null, message: m.errorMessage ?? '' } : null);
          return (
            <li
              key={m.id}
              className={`chat-row ${m.role === 'user' ? 'chat-row-user' : ''} ${mine ? 'room-row-own' : ''}`}
              data-role={m.role}
              data-status={m.status}
              data-author={m.role === 'user' ? name : undefined}
              data-message-id={m.id}
            >
              <Avatar name={name} own={mine} />
              <div className="chat-bubble-wrap">
                <div className={`chat-bubble ${m.role === 'user' ? 'chat-bubble-user' : ''}`}>
                  <div className="chat-name">{mine ? `${name} (you)` : name}</div>
                  {m.status === 'streaming' && !text ? (
                    <span className="typing" role="status" aria-label={`${worldName} is writing`}>
                      <span />
                      <span />
                      <span />
                    </span>
                  ) : (
                    <div className="chat-text" dangerouslySetInnerHTML={{ __html: chatHtml(text, scope) }} />
                  )}
                  {r.isHost && m.status === 'streaming' && (
                    <div className="chat-tools">
                      <button type="button" className="link" onClick={() => void r.stop()}>
                        Stop
                      </button>
                    </div>
                  )}
                  {r.isHost && m.status !== 'streaming' && !s.room.endedAt && editing?.id !== m.id && (
                    <HostTools r={r} m={m} last={i === lastIndex} disabled={replying} onEdit={() => setEditing({ id: m.id, text: m.content })} confirm={confirm} />
                  )}
                  {editing?.id === m.id && (
                    <form
                      className="chat-edit"
                      aria-label="Message editor"
                      onSubmit={(e) => {
                        e.preventDefault();
                        void r.session(['messages', m.id], 'PATCH', { content: editing.text }).then((ok) => ok && setEditing(null));
                      }}
                    >
                      <textarea aria-label="Edit message" value={editing.text} rows={4} onChange={(e) => setEditing({ id: m.id, text: e.target.value })} />
                      <div className="row">
                        <button type="submit">Save edit</button>
                        <button type="button" className="secondary" onClick={() => setEditing(null)}>
                          Cancel
                        </button>
                      </div>
                    </form>
                  )}
                </div>
                {failure && i === lastUserIndex && (
                  <TurnFailure
                    code={failure.code}
                    message={failure.message}
                    onRetry={r.isHost && i === lastIndex && !s.room.endedAt ? () => void r.regenerate() : null}
                    retryDisabled={replying}
                  />
                )}
              </div>
            </li>
          );
        })}
        {s.messages.length === 0 && <li className="hint">Nothing written yet. The players write; the AI answers the round.</li>}
      </ol>
      {s.queue.length > 0 && (
        <section className="room-queue" aria-label="Waiting for the reply" data-testid="room-queue">
          <h3 className="hint">Waiting for the reply</h3>
          <ul className="list">
            {s.queue.map((q) => (
              <li key={q.id} className="room-queued" data-author={q.authorName}>
                <strong>{q.authorName}:</strong> <span className="room-queued-text">{q.content}</span>
                {(r.isHost || q.participantId === s.me.participantId) && !replying && (
                  <button type="button" className="link" onClick={() => void r.takeBack(q.id)} aria-label={`Take back: ${q.content}`}>
                    Take back
                  </button>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      <p className="hint room-writing" aria-live="polite" data-testid="room-writing">
        {writers.length > 0 ? `${writers.join(', ')} ${writers.length === 1 ? 'is' : 'are'} writing…` : '\u00a0'}
      </p>
      <form className="composer" onSubmit={submit} aria-label="Write to the room">
        <textarea
          aria-label="Your message"
          value={draft}
          maxLength={8000}
          disabled={!!blocked}
          placeholder={blocked ?? 'Write what you do or say…'}
          onChange={(e) => {
            setDraft(e.target.value);
            if (e.target.value) r.typed();
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <div className="spread">
          <span className="hint" data-testid="composer-note">
            {blocked ?? (replying ? 'The AI is replying; your message waits for the next round.' : 'Enter sends; Shift+Enter starts a new line.')}
          </span>
          <button type="submit" disabled={!!blocked || sending || !draft.trim()}>
            Send
          </button>
        </div>
      </form>
    </section>
  );
}
