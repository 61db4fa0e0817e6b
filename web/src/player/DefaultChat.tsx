/**
 * The default chat, for worlds without an interface (and beside one): bubbles with avatars,
 * sanitized Markdown, the player's message at once and a typing indicator until the first token,
 * edit, delete, branch, continue, regenerate, swipes with a counter, a failed turn's notice with a retry,
 * and the newest reply's choices as buttons (choosing one sends it as the player's message).
 */
import { apiPath, type AssetScope, assetIdOf, resolveAssetUrl } from '@yumina/sandbox';
import { displayedText } from '@yumina/world/directives';
import { useEffect, useRef, useState } from 'react';
import { renderMarkdown } from '../sandbox/frame/markdown.ts';
import { type ChatNames, chatNames } from './chat-names.ts';
import { useHistoryPages } from './history-pages.ts';
import type { PlayerMessage } from './player-types.ts';
import type { Player } from './use-player.ts';
import type { Confirm } from './ConfirmDialog.tsx';
import { SentPromptDialog } from './SentPrompt.tsx';
import { TurnFailure } from './TurnFailure.tsx';
import { replyPrice } from './reply-price.ts';
import { count } from '../lib/text.ts';
import { useComfort } from './comfort.ts';
import { type PendingDelete, useDelayedDelete, UNDO_MS } from './delayed-delete.ts';
import { ContextGauge, ReadAloudButton, useTranslation } from './MessageExtras.tsx';
import { readAloud, stopReading } from './reading.ts';
import { api } from '../lib/api.ts';

/** Chat Markdown with images only from this world's assets. */
export function chatHtml(text: string, scope: AssetScope | null): string {
  return renderMarkdown(text, { image: (ref) => (scope && assetIdOf(ref) ? resolveAssetUrl(ref, scope) : null) });
}

/** The reply being written as the player reads it: the world's directives hidden, also one still arriving at its end. */
function streamedText(p: Player): string {
  return displayedText(p.streaming, (p.world?.world.variables ?? []).map((v) => v.id), { partial: true });
}

function Avatar({ name, src }: { name: string; src: string | null }) {
  if (src) return <img className="chat-avatar" src={src} alt="" aria-hidden="true" />;
  return (
    <span className="chat-avatar" aria-hidden="true">
      {(name.trim()[0] ?? '?').toUpperCase()}
    </span>
  );
}

/** A reply's price (./reply-price.ts): its tokens in, cached and out and what it cost, or its tokens on the player's own key. */
function ReplyUsage({ m }: { m: PlayerMessage }) {
  const price = replyPrice(m);
  if (!price) return null;
  return (
    <span className="chat-usage" data-testid="reply-usage" title={price.title}>
      {price.text}
    </span>
  );
}

/** Editing a message: the editor takes the conversation's full width, its buttons scrolled into view. */
function MessageEditor(props: { p: Player; m: PlayerMessage; text: string; setText(t: string | null): void; canRegenerate: boolean }) {
  const { p, m, text, setText, canRegenerate } = props;
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    form.current?.scrollIntoView({ block: 'nearest' });
    form.current?.querySelector('textarea')?.focus();
  }, []);
  const save = () => p.action(['messages', m.id], 'PATCH', { content: text });
  return (
    <form
      ref={form}
      className="chat-edit"
      aria-label="Message editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save().then(() => setText(null), () => {});
      }}
    >
      <textarea aria-label="Edit message" value={text} rows={Math.min(14, Math.max(4, text.split('\n').length + 1))} onChange={(e) => setText(e.target.value)} />
      <div className="row">
        <button type="submit" disabled={p.busy}>
          Save edit
        </button>
        {canRegenerate && (
          <button
            type="button"
            disabled={p.busy}
            onClick={() =>
              void save().then(
                () => {
                  setText(null);
                  return p.stream('regenerate');
                },
                () => {},
              )
            }
          >
            Save and regenerate
          </button>
        )}
        <button type="button" className="secondary" onClick={() => setText(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Bubble(props: {
  p: Player;
  message: PlayerMessage;
  last: boolean;
  /** The player's last message, answered by the last reply: its edit can regenerate that reply. */
  lastUser: boolean;
  /** A player's message whose failed turn may be tried again (the newest turn). */
  retry?: boolean;
  names: ChatNames;
  /** Deletes it and those after it, with a few seconds to undo (./delayed-delete.ts). */
  onDelete(): void;
  /** On the player's last message: the reply's prompt tokens, for the context gauge. */
  promptTokens?: number | null;
  /** The message a search jumped to: highlighted and focused. */
  target: boolean;
}) {
  const { p, message: m, last, lastUser, retry = false, names, onDelete, promptTokens, target } = props;
  const [editing, setEditing] = useState<string | null>(null);
  const [showSent, setShowSent] = useState(false);
  const streamingHere = m.status === 'streaming';
  const text = streamingHere ? streamedText(p) : m.content;
  const mine = m.role === 'user';
  const onError = (message: string) => p.toast(message, 'error');
  const translated = useTranslation(p.data!.session.id, m.id, onError);
  const row = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!target) return;
    row.current?.scrollIntoView({ block: 'center' });
    row.current?.focus({ preventScroll: true });
  }, [target]);
  const contextWindow = p.world?.world.settings?.maxContext ?? 200_000;
  const translation = translated.translation;
  return (
    <li
      ref={row}
      tabIndex={target ? -1 : undefined}
      className={`chat-row ${mine ? 'chat-row-user' : ''} ${editing !== null ? 'chat-row-editing' : ''} ${target ? 'chat-row-target' : ''} ${translation ? 'chat-row-translated' : ''}`}
      data-role={m.role}
      data-status={m.status}
      data-message-id={m.id}
    >
      <Avatar name={mine ? names.user : names.world} src={mine ? names.userAvatar : names.worldAvatar} />
      <div className={`chat-bubble ${mine ? 'chat-bubble-user' : ''}`}>
        <div className="chat-name">{mine ? names.user : names.world}</div>
        {editing !== null ? (
          <MessageEditor p={p} m={m} text={editing} setText={setEditing} canRegenerate={lastUser} />
        ) : streamingHere && !text ? (
          <TypingIndicator />
        ) : translation ? (
          <div className="chat-translated">
            <div className="chat-text" data-testid="message-text" dangerouslySetInnerHTML={{ __html: chatHtml(text, p.assetScope) }} />
            <div className="chat-text chat-translation" data-testid="translation" lang={translation.tag} aria-label={`Translation into ${translation.language}`} role="note">
              <div className="chat-translation-label">{translation.language}</div>
              <div dangerouslySetInnerHTML={{ __html: chatHtml(translation.content, p.assetScope) }} />
            </div>
          </div>
        ) : (
          <div className="chat-text" data-testid="message-text" dangerouslySetInnerHTML={{ __html: chatHtml(text, p.assetScope) }} />
        )}
        {m.truncated && <p className="hint">Cut at the reply length limit.</p>}
        {m.failure && (
          <TurnFailure code={m.failure.code} message={m.failure.message} onRetry={retry ? () => void p.stream('regenerate') : null} retryDisabled={p.busy} />
        )}
        {!streamingHere && editing === null && !p.guest && (
          <div className="chat-tools">
            <button type="button" className="link" aria-label="Edit" onClick={() => setEditing(m.content)} disabled={p.busy}>
              Edit
            </button>
            <button
              type="button"
              className="link"
              aria-label="Delete"
              disabled={p.busy}
              onClick={onDelete}
            >
              Delete
            </button>
            {mine && (
              <button type="button" className="link" onClick={() => setShowSent(true)}>
                What was sent
              </button>
            )}
            {mine && typeof promptTokens === 'number' && <ContextGauge used={promptTokens} window={contextWindow} />}
            {!mine && m.status === 'complete' && (
              <ReadAloudButton sessionId={p.data!.session.id} message={m} character={`${p.world?.id ?? ''}:${names.world}`} author={p.world?.world.voice} onError={onError} />
            )}
            {!mine && m.status === 'complete' && m.content.trim() !== '' && (
              <button type="button" className="link" aria-pressed={!!translation} disabled={translated.busy} onClick={() => void translated.toggle()}>
                {translated.busy ? 'Translating…' : translation ? 'Hide translation' : 'Translate'}
              </button>
            )}
            <ReplyUsage m={m} />
            <button
              type="button"
              className="link"
              aria-label="Branch from here"
              disabled={p.busy}
              onClick={async () => {
                const sessionId = p.data!.session.id;
                const branch = await fetch(`/api/sessions/${sessionId}/branch/${m.id}`, { method: 'POST', credentials: 'same-origin' }).then(
                  (r) => r.json() as Promise<{ session?: { id: string } }>,
                );
                if (branch.session) {
                  await p.loadSessions();
                  await p.switchSession(branch.session.id);
                  p.toast('A new session branches from that message.', 'success');
                }
              }}
            >
              Branch
            </button>
            {last && m.role === 'assistant' && m.swipes.length > 1 && (
              <span className="row">
                <button type="button" className="link" aria-label="Previous reply" onClick={() => void p.act(['swipe', 'left'])}>
                  ‹
                </button>
                <span data-testid="swipe-index">
                  {m.activeSwipeIndex + 1}/{m.swipes.length}
                </span>
                <button type="button" className="link" aria-label="Next reply" onClick={() => void p.act(['swipe', 'right'])}>
                  ›
                </button>
              </span>
            )}
          </div>
        )}
        {showSent && <SentPromptDialog sessionId={p.data!.session.id} messageId={m.id} onClose={() => setShowSent(false)} />}
      </div>
    </li>
  );
}

export function TypingIndicator() {
  return (
    <span className="typing" data-testid="typing" role="status" aria-label="The story is being written">
      <span />
      <span />
      <span />
    </span>
  );
}

/**
 * `box`: whether the page offers its own message box. A world whose interface has the built-in
 * MessageInput gets none here (one box per world, in its interface, with Regenerate and Continue
 * beside it); the conversation's controls stay.
 */
export function DefaultChat({ p, confirm, box = true, target = null }: { p: Player; confirm: Confirm; box?: boolean; target?: string | null }) {
  // Long sessions: the newest page, and earlier ones as the reader scrolls up (../player/history-pages.ts).
  const history = useHistoryPages(p.data);
  const deletion = useDelayedDelete(p);
  const pending = deletion.pending;
  // A delete offering Undo: the message and those after it are out of the chat meanwhile.
  const messages = pending && pending.sessionId === p.data?.session.id ? history.messages.filter((m) => m.position < pending.position) : history.messages;
  const last = messages.at(-1);
  const lastUser = last?.role === 'assistant' && messages.at(-2)?.role === 'user' ? messages.at(-2) : undefined;
  const names = chatNames(p);
  const streamingRow = messages.some((m) => m.status === 'streaming');
  const look = useComfort();
  const box_ = useRef<HTMLTextAreaElement>(null);
  const [impersonating, setImpersonating] = useState(false);
  useJumpTo(target, history);
  useAutoPlay(p, names.world);
  const send = () => {
    const text = p.draft.trim();
    if (!text || p.busy) return;
    // The player speaks: any reading aloud stops.
    stopReading();
    p.setDraft('');
    void p.stream('messages', { content: text });
  };
  const impersonate = async () => {
    const id = p.data?.session.id;
    if (!id || impersonating) return;
    setImpersonating(true);
    try {
      const answer = await api<{ content: string }>(apiPath('sessions', id, 'impersonate'), { method: 'POST', json: { draft: p.draft } });
      p.setDraft(answer.content);
      box_.current?.focus();
    } catch (e) {
      p.toast((e as Error).message, 'error');
    } finally {
      setImpersonating(false);
    }
  };
  const remove = (m: PlayerMessage) => {
    const index = messages.indexOf(m);
    deletion.remove({ sessionId: p.data!.session.id, messageId: m.id, position: m.position, count: messages.length - index });
  };
  const background = chatBackground(p);
  return (
    <section className={`card chat chat-size-${look.textSize}`} aria-label="Conversation">
      <ol className={`chat-list ${background ? 'chat-list-background' : ''}`} data-testid="messages" {...history.listProps} style={{ ...history.listProps.style, ...background }}>
        {history.hasEarlier && (
          <li data-testid="earlier">
            <button type="button" className="link" disabled={history.loadingEarlier} onClick={() => void history.loadEarlier()}>
              {history.loadingEarlier ? 'Loading earlier messages…' : 'Earlier messages'}
            </button>
          </li>
        )}
        {messages.map((m, i) =>
          m.role === 'assistant' && m.status === 'failed' ? (
            <li key={m.id} className="chat-row chat-row-failed" data-status="failed" data-message-id={m.id}>
              <TurnFailure code={null} message={m.errorMessage ?? ''} onRetry={m === last ? () => void p.stream('regenerate') : null} retryDisabled={p.busy} />
            </li>
          ) : (
            <Bubble
              key={m.id}
              p={p}
              message={m}
              last={m === last}
              lastUser={m === lastUser}
              retry={i >= messages.length - 2}
              names={names}
              onDelete={() => remove(m)}
              promptTokens={m === lastUser ? last?.promptTokens : undefined}
              target={m.id === target}
            />
          ),
        )}
        {p.pendingUser !== null && (
          <li className="chat-row chat-row-user" data-role="user" data-status="sending">
            <Avatar name={names.user} src={names.userAvatar} />
            <div className="chat-bubble chat-bubble-user">
              <div className="chat-name">{names.user}</div>
              <div className="chat-text" dangerouslySetInnerHTML={{ __html: chatHtml(p.pendingUser, p.assetScope) }} />
            </div>
          </li>
        )}
        {p.busy && !streamingRow && (
          <li className="chat-row" data-testid="streaming" data-role="assistant">
            <Avatar name={names.world} src={names.worldAvatar} />
            <div className="chat-bubble">
              <div className="chat-name">{names.world}</div>
              {p.streaming ? <div className="chat-text" dangerouslySetInnerHTML={{ __html: chatHtml(streamedText(p), p.assetScope) }} /> : <TypingIndicator />}
            </div>
          </li>
        )}
        {p.busy && p.reasoning && (
          <li className="hint" data-testid="reasoning">
            Thinking: {p.reasoning}
          </li>
        )}
      </ol>
      {pending && <UndoNotice pending={pending} onUndo={deletion.undo} />}
      {p.error && (
        <p role="alert" className="chat-error">
          {p.error}
        </p>
      )}
      {/* choices offered by a message that waits to be deleted go with it */}
      {p.pendingChoices.length > 0 && !pending && (
        <div role="group" aria-label="Choices" className="chat-choices" data-testid="choices">
          {p.pendingChoices.map((choice) => (
            <button
              key={choice}
              type="button"
              className="secondary"
              disabled={p.busy || (p.guest !== null && !p.guest.canSendMessage)}
              onClick={() => void p.choose(choice)}
            >
              {choice}
            </button>
          ))}
        </div>
      )}
      <form
        aria-label={box ? 'Send a message' : 'Conversation controls'}
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        {!box && <p className="hint">Write in the world&apos;s interface above.</p>}
        {box && (
        <textarea
          ref={box_}
          aria-label="Message"
          value={p.draft}
          placeholder="Write your message — Enter sends, Shift+Enter starts a new line"
          onChange={(e) => p.setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
        )}
        <div className="row">
          {box && (
            <button type="submit" disabled={p.busy || (p.guest !== null && !p.guest.canSendMessage)}>
              Send
            </button>
          )}
          {!p.guest && box && (
            <button type="button" className="secondary" disabled={p.busy || impersonating} aria-describedby="impersonate-hint" onClick={() => void impersonate()}>
              {impersonating ? 'Writing your line…' : 'Write my line'}
            </button>
          )}
          {!p.guest && (
            <>
              <button type="button" className="secondary" disabled={p.busy || last?.role !== 'assistant'} onClick={() => void p.stream('regenerate')}>
                Regenerate
              </button>
              <button type="button" className="secondary" disabled={p.busy || last?.role !== 'assistant'} onClick={() => void p.stream('continue')}>
                Continue
              </button>
              <button type="button" className="secondary" disabled={!p.busy} onClick={() => void p.act(['stop'])}>
                Stop
              </button>
              <button
                type="button"
                className="secondary"
                disabled={p.busy}
                onClick={() => confirm('Restart this conversation from its beginning? Its messages will be cleared.', () => p.action(['restart']))}
              >
                Restart
              </button>
            </>
          )}
        </div>
        {!p.guest && box && (
          <p className="visually-hidden" id="impersonate-hint">
            The model writes your next line into the message box, for you to edit and send.
          </p>
        )}
      </form>
    </section>
  );
}

/** The world's chat background (a colour, or one of its images), as the list's style. */
function chatBackground(p: Player): React.CSSProperties | undefined {
  const bg = p.world?.world.chatBackground;
  if (!bg) return undefined;
  if (bg.startsWith('#')) return { background: bg };
  const url = p.assetScope && assetIdOf(bg) ? resolveAssetUrl(bg, p.assetScope) : '';
  return url ? { backgroundImage: `url("${url.replace(/"/g, '%22')}")`, backgroundSize: 'cover', backgroundPosition: 'center' } : undefined;
}

/** "Message deleted" with Undo, for as long as the delete waits (./delayed-delete.ts). */
function UndoNotice({ pending, onUndo }: { pending: PendingDelete; onUndo(): void }) {
  const undo = useRef<HTMLButtonElement>(null);
  useEffect(() => undo.current?.focus(), [pending]);
  return (
    <div className="undo-notice" role="status" data-testid="undo-notice">
      <span>
        {pending.count === 1 ? 'Message deleted.' : `${pending.count} messages deleted.`} Undo within {Math.round(UNDO_MS / 1000)} seconds.
      </span>
      <button type="button" ref={undo} className="secondary" onClick={onUndo}>
        Undo
      </button>
    </div>
  );
}

/** Scrolls to the message a search chose: loads earlier pages until it is among them. */
function useJumpTo(target: string | null, history: ReturnType<typeof useHistoryPages<PlayerMessage>>) {
  const found = !!target && history.messages.some((m) => m.id === target);
  useEffect(() => {
    if (target && !found && history.hasEarlier && !history.loadingEarlier) void history.loadEarlier();
  }, [target, found, history]);
}

/** With auto-play on, each new reply is read aloud once it is complete. */
function useAutoPlay(p: Player, character: string) {
  const look = useComfort();
  const newest = p.data?.messages.at(-1);
  const seen = useRef<{ session: string; message: string } | null>(null);
  const session = p.data?.session.id ?? '';
  useEffect(() => {
    if (!newest || p.busy) return;
    const first = seen.current?.session !== session;
    if (!first && seen.current?.message === newest.id) return;
    seen.current = { session, message: newest.id };
    // Opening a session reads nothing; a reply that arrives while the player is here does.
    if (first || !look.autoPlay || newest.role !== 'assistant' || newest.status !== 'complete') return;
    void readAloud({ sessionId: p.data!.session.id, messageId: newest.id, text: newest.content, character: `${p.world?.id ?? ''}:${character}`, author: p.world?.world.voice, comfort: look }).catch((e: Error) => p.toast(e.message, 'error'));
  }, [newest, session, p, look, character]);
}
