import { lazy, type ReactNode, Suspense, useDeferredValue, useEffect, useState } from 'react';
import { chatNames } from '../player/chat-names.ts';
import type { SearchHit } from '../player/MessageSearch.tsx';
import { navigate } from '../lib/router.tsx';
import { useConfirm } from '../player/ConfirmDialog.tsx';
import { DefaultChat } from '../player/DefaultChat.tsx';
import { sandboxHandlers, sandboxState } from '../player/sandbox-bridge.ts';
import { SessionPanel } from '../player/SessionPanel.tsx';
import { sessionSpent } from '../player/reply-price.ts';
import { usePlayer } from '../player/use-player.ts';
import { PageLoading } from '../shell/PageLoading.tsx';
import { useTitle } from '../lib/title.ts';
import '../player/player.css';

/** The sandbox host and its compilers load only for a world with its own interface (a chat-only world never needs them). */
/** Issue 50's dialogs load when opened: the player's first load carries neither. */
const MessageSearch = lazy(() => import('../player/MessageSearch.tsx').then((m) => ({ default: m.MessageSearch })));
const ComfortPanel = lazy(() => import('../player/ComfortPanel.tsx').then((m) => ({ default: m.ComfortPanel })));

const SandboxHost = lazy(() => import('../sandbox/SandboxHost.tsx').then((m) => ({ default: m.SandboxHost })));

/**
 * The world player: a world with its own interface runs it in the sandbox frame, wired to every
 * member of the sandbox API; the default chat, the session's variables, memory, checkpoints and
 * audio sit beside it (or alone, for a world without an interface).
 */
export function PlayerPage({ worldId, embedded = false }: { worldId: string; embedded?: boolean }) {
  const p = usePlayer(worldId);
  // The tab names the world (the studio's playtest names itself).
  useTitle(['Play', p.world?.world.name], !embedded);
  const { confirm, dialog } = useConfirm();
  const [open, setOpen] = useState<'search' | 'comfort' | null>(null);
  // The message a search chose (or a link's ?message=): the chat scrolls to it.
  const [target, setTarget] = useState<string | null>(null);
  useEffect(() => setTarget(new URLSearchParams(window.location.search).get('message')), [worldId]);
  const jump = async (hit: SearchHit) => {
    setOpen(null);
    if (hit.worldId !== worldId) return navigate(`/play/${encodeURIComponent(hit.worldId)}?session=${encodeURIComponent(hit.sessionId)}&message=${encodeURIComponent(hit.messageId)}`);
    if (hit.sessionId !== p.data?.session.id) await p.switchSession(hit.sessionId);
    setTarget(hit.messageId);
  };
  // Built per render from the latest data: SandboxHost sends only what changed, and answers each request with the handlers it holds then.
  const state = sandboxState(p);
  const handlers = sandboxHandlers(p, confirm);

  if (p.error && !p.data) return <p role="alert">{p.error}</p>;
  if (!p.world || !p.data || !p.assetScope) return <PageLoading />;
  const root = p.world.world.rootComponent;
  const spent = sessionSpent(p.data.session.spent);
  const immersive = p.canvasMode === 'fullscreen';
  // Immersive: the frame fills what the screen leaves below the head row (player.css).
  const frameStyle = { width: '100%', ...(immersive ? {} : { height: 480 }), border: '1px solid #ddd', borderRadius: 8 };

  return (
    <div className={`player ${immersive ? 'player-immersive' : ''}`} data-canvas-mode={p.canvasMode}>
      <div className="row player-head">
        <h2>{p.world.world.name}</h2>
        {spent && (
          <p className="player-spent" data-testid="session-spent" title={spent.full}>
            {spent.short}
          </p>
        )}
        {!immersive && (
          <div className="row player-head-tools">
            {!p.guest && (
              <button type="button" className="secondary" aria-haspopup="dialog" onClick={() => setOpen('search')}>
                Search
              </button>
            )}
            <button type="button" className="secondary" aria-haspopup="dialog" onClick={() => setOpen('comfort')}>
              Display and voice
            </button>
          </div>
        )}
        {root && (
          <button type="button" className="secondary" onClick={() => handlers.toggleImmersive?.()}>
            {immersive ? 'Leave immersive mode' : 'Immersive mode'}
          </button>
        )}
      </div>
      {root ? (
        // While the host loads, its box holds the frame's place (no layout shift when it arrives).
        <Suspense
          fallback={
            <div className="sandbox-frame" style={{ ...frameStyle, display: 'grid', placeItems: 'center' }} role="status" aria-live="polite">
              Loading the world&apos;s interface…
            </div>
          }
        >
          <SandboxHost
            world={{ id: p.world.id, name: p.world.world.name, rootComponent: root }}
            state={state}
            handlers={handlers}
            assetToken={p.assetScope.token}
            title="World interface"
            className="sandbox-frame"
            style={frameStyle}
          />
        </Suspense>
      ) : null}
      <div className="toasts" aria-live="polite">
        {p.toasts.map((t) => (
          <p key={t.id} role="status" className={`toast toast-${t.kind}`}>
            {t.message}
          </p>
        ))}
      </div>
      {!immersive && (
        <div className="player-body">
          {/* One message box: the interface's own when it has one (a draft the world sets with setComposerDraft still shows here). */}
          <DefaultChat p={p} confirm={confirm} box={!hasOwnBox(root) || p.draft !== ''} target={target} />
          <Afterwards>
            <SessionPanel p={p} confirm={confirm} />
          </Afterwards>
        </div>
      )}
      {dialog}
      {open && (
        <Suspense fallback={null}>
          {open === 'search' ? (
            <MessageSearch sessionId={p.data.session.id} onJump={(hit) => void jump(hit)} onClose={() => setOpen(null)} />
          ) : (
            <ComfortPanel worldId={p.world.id} character={chatNames(p).world} author={p.world.world.voice} onClose={() => setOpen(null)} />
          )}
        </Suspense>
      )}
    </div>
  );
}

/** Whether a world's interface shows the built-in message box (then the page shows none of its own). */
function hasOwnBox(root: { files: Record<string, string> } | null | undefined): boolean {
  return !!root && Object.values(root.files).some((code) => /<MessageInput\b/.test(code));
}

/**
 * Renders its children in a render of its own right after the one that mounted it (a deferred,
 * interruptible one): the chat is painted first, then the session panel beside or below it (its
 * form controls, select and sliders made one long task of opening the player on a phone). Its
 * grid column is sized without it, so nothing moves when it arrives.
 */
function Afterwards({ children }: { children: ReactNode }) {
  const ready = useDeferredValue(true, false);
  return ready ? children : <div />;
}
