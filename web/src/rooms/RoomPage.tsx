/**
 * /rooms/<id>: a room of a world, live (docs/ROOMS.md): the conversation with each player's name,
 * the round, the members and, for the host, the room's controls. A member who was removed, or who
 * opens a room they are not in, is told so.
 */
import { lazy, Suspense } from 'react';
import { Link } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { useAssetScope } from '../player/asset-access.ts';
import { useConfirm } from '../player/ConfirmDialog.tsx';
import { PageLoading } from '../shell/PageLoading.tsx';
import { RoomChat } from './RoomChat.tsx';
import { RoomPanel } from './RoomPanel.tsx';
import { roomSandboxHandlers, roomSandboxState } from './room-sandbox.ts';
import { useRoom } from './use-room.ts';
import '../player/player.css';
import './rooms.css';

/** The sandbox host loads only for a world with its own interface. */
const SandboxHost = lazy(() => import('../sandbox/SandboxHost.tsx').then((m) => ({ default: m.SandboxHost })));
const FRAME_STYLE = { width: '100%', height: 480, border: '1px solid #ddd', borderRadius: 8 };

const CONNECTION_LABELS = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' } as const;

export function RoomPage({ roomId }: { roomId: string }) {
  const { loading, info } = useSession();
  const r = useRoom(roomId);
  const { confirm, dialog } = useConfirm();
  const scope = useAssetScope(r.snap?.room.worldId ?? null);
  const name = r.world?.world.name ?? r.snap?.room.title ?? null;
  useTitle(['Room', name]);

  if (!loading && !info?.account) {
    return (
      <section className="card narrow">
        <h2>Sign in to enter the room</h2>
        <p>
          <Link to={`/login?returnTo=${encodeURIComponent(`/rooms/${roomId}`)}`} className="button">
            Sign in
          </Link>
        </p>
      </section>
    );
  }
  if (r.removed) {
    return (
      <section className="card narrow" role="alert" data-testid="room-removed">
        <h2>You are no longer in this room</h2>
        <p>The host removed you, or you left. Ask the host for a new invite link to come back.</p>
        <Link to="/library">Back to the library</Link>
      </section>
    );
  }
  if (r.missing) {
    return (
      <section className="card narrow" role="alert">
        <h2>No such room</h2>
        <p>This room does not exist, or you are not one of its members. Ask its host for an invite link.</p>
      </section>
    );
  }
  if (!r.snap) return r.error ? <p role="alert">{r.error}</p> : <PageLoading />;
  const s = r.snap;
  const me = s.members.find((m) => m.id === s.me.participantId);
  const root = r.world?.world.rootComponent;

  return (
    <div className="player room" data-testid="room-page" data-role={s.me.role}>
      <div className="spread player-head">
        <div>
          <h2>{name ?? 'Room'}</h2>
          <p className="hint">
            Playing together{me ? ` · you are ${s.me.role === 'host' || s.me.role === 'owner' ? 'the host' : `a ${s.me.role}`}` : ''}
          </p>
        </div>
        <span className={`room-connection room-connection-${r.connection}`} role="status" data-testid="room-connection" data-state={r.connection}>
          {CONNECTION_LABELS[r.connection]}
        </span>
      </div>
      {s.room.endedAt && (
        <p className="card room-ended" role="status" data-testid="room-ended">
          The host ended this room. The conversation stays readable; nothing new can be written.
        </p>
      )}
      {r.error && (
        <p role="alert" className="chat-error" data-testid="room-error">
          {r.error}{' '}
          <button type="button" className="link" onClick={() => r.setError(null)}>
            Dismiss
          </button>
        </p>
      )}
      {root && r.world && scope && (
        <Suspense
          fallback={
            <div className="sandbox-frame" style={{ ...FRAME_STYLE, display: 'grid', placeItems: 'center' }} role="status" aria-live="polite">
              Loading the world&apos;s interface…
            </div>
          }
        >
          <SandboxHost
            world={{ id: r.world.id, name: r.world.world.name, rootComponent: root }}
            state={roomSandboxState(r, info?.account ?? null)}
            handlers={roomSandboxHandlers(r)}
            assetToken={scope.token}
            title="World interface"
            className="sandbox-frame"
            style={FRAME_STYLE}
          />
        </Suspense>
      )}
      <div className="toasts" aria-live="polite">
        {r.toasts.map((t) => (
          <p key={t.id} role="status" className={`toast toast-${t.kind}`}>
            {t.message}
          </p>
        ))}
      </div>
      <div className="player-body">
        <RoomChat r={r} scope={scope} confirm={confirm} />
        <RoomPanel r={r} confirm={confirm} />
      </div>
      {dialog}
    </div>
  );
}
