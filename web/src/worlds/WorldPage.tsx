import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useAccountChanges, useSession } from '../lib/session.tsx';
import { COVER_HEAD, Cover, TagList } from '../library/world-card.tsx';
import { NotFound } from '../shell/NotFound.tsx';
import { PageLoading } from '../shell/PageLoading.tsx';
import { FavoriteButton } from '../updates/FavoriteButton.tsx';
import { UpdateHistory } from '../updates/UpdateHistory.tsx';
import { worldCardUrl, worldUrl } from './world-data.ts';
import { useTitle } from '../lib/title.ts';
import { shortDateTime } from '../lib/dates.ts';
import { count } from '../lib/text.ts';

/** The "Play together" dialog loads when it is opened. */
const PlayTogetherDialog = lazy(() => import('../rooms/PlayTogether.tsx').then((m) => ({ default: m.PlayTogetherDialog })));

interface WorldView {
  id: string;
  status: string;
  canEdit: boolean;
  /** Whether its author lets players open rooms on it (docs/ROOMS.md). */
  roomsAllowed?: boolean;
  coverUrl: string | null;
  publishedAt: string | null;
  world: { name?: string; description?: string; author?: string; customTags?: string[] };
}

interface LibraryCard {
  author: string | null;
  plays: number;
  tags: string[];
}

interface RoomRow {
  id: string;
  role: string;
  hostName: string;
  endedAt: string | null;
  updatedAt: string;
}

interface SessionRow {
  id: string;
  title: string;
  messageCount: number;
  updatedAt: string;
}

/**
 * /worlds/<id>: cover, author, tags, description, Play or Continue, favorite, the player's
 * sessions of this world and the update history. `?inspect=1` is read-only even for the author.
 */
export function WorldPage({ id }: { id: string }) {
  const { loading, info } = useSession();
  const [world, setWorld] = useState<WorldView | null>(null);
  const [card, setCard] = useState<LibraryCard | null>(null);
  const [sessions, setSessions] = useState<SessionRow[] | null>(null);
  const [missing, setMissing] = useState(false);
  const [rooms, setRooms] = useState<RoomRow[] | null>(null);
  /** A group world's characters (docs/GROUPS.md): a scene of them starts from here. */
  const [cast, setCast] = useState<{ id: string; name: string }[]>([]);
  const [starting, setStarting] = useState<string | null>(null);
  const [together, setTogether] = useState(false);
  const signedIn = !!info?.account;
  const accountId = loading ? undefined : (info?.account?.id ?? null);
  useTitle([world?.world.name ?? (missing ? 'Not found' : null)]);
  const loadSessions = useCallback(() => {
    api<{ sessions: SessionRow[] }>(`/api/worlds/${encodeURIComponent(id)}/sessions`).then((r) => setSessions(r.sessions), () => setSessions([]));
  }, [id]);
  // The world and its card are read at once (prefetched with the page's chunk: routes.tsx), with the
  // cookie, so the author gets the working copy without waiting for the session; read again only
  // when the account changes afterwards (signing in or out elsewhere in the app).
  const reads = useAccountChanges(accountId);
  useEffect(() => {
    let live = true;
    setWorld(null);
    setMissing(false);
    api<WorldView>(worldUrl(id)).then((w) => live && setWorld(w), () => live && setMissing(true));
    api<LibraryCard>(worldCardUrl(id)).then((c) => live && setCard(c), () => live && setCard(null));
    return () => {
      live = false;
    };
  }, [id, reads]);
  useEffect(() => {
    if (signedIn) loadSessions();
    else setSessions(null);
  }, [signedIn, loadSessions]);
  useEffect(() => {
    if (!signedIn) return setCast([]);
    let live = true;
    api<{ characters: { id: string; name: string }[] }>(`/api/worlds/${encodeURIComponent(id)}/characters`).then((r) => live && setCast(r.characters), () => live && setCast([]));
    return () => {
      live = false;
    };
  }, [signedIn, id]);
  useEffect(() => {
    if (!signedIn) return setRooms(null);
    let live = true;
    api<{ rooms: RoomRow[] }>(`/api/rooms?worldId=${encodeURIComponent(id)}`).then((r) => live && setRooms(r.rooms), () => live && setRooms([]));
    return () => {
      live = false;
    };
  }, [signedIn, id]);
  // A guest is offered the preview when the platform allows it (guest turns on its provider).
  const [guestPreview, setGuestPreview] = useState(false);
  const [guestTurns, setGuestTurns] = useState(0);
  useEffect(() => {
    if (loading || signedIn) return;
    let live = true;
    api<{ guestPreview?: boolean; guestTurnsPerHour?: number }>('/api/platform').then(
      (r) => {
        if (!live) return;
        setGuestPreview(r.guestPreview === true);
        setGuestTurns(r.guestTurnsPerHour ?? 0);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [loading, signedIn]);
  if (missing) return <NotFound what="world" />;
  if (loading || !world) return <PageLoading />;
  const inspecting = new URLSearchParams(window.location.search).get('inspect') === '1';
  const name = world.world.name ?? id;
  const tags = card?.tags ?? [...new Set((world.world.customTags ?? []).map((t) => t.toLowerCase()))];
  const author = card?.author ?? (world.canEdit ? info?.account?.displayName : null) ?? world.world.author ?? 'unknown';
  const playing = (sessions?.length ?? 0) > 0;

  async function remove(s: SessionRow) {
    if (!window.confirm(`Delete the session "${s.title || 'Untitled'}" and its ${s.messageCount} messages? This cannot be undone.`)) return;
    await api(`/api/sessions/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
    loadSessions();
  }

  return (
    <div className="world-details">
      <section className="world-head">
        <Cover url={world.coverUrl} name={name} width={COVER_HEAD.width} ratio={COVER_HEAD.ratio} eager seed={world.id} />
        <div>
          <h1 data-testid="world-name">{name}</h1>
          <p className="hint">
            by <span data-testid="world-author">{author}</span>
            {card?.plays ? ` · ${count(card.plays, 'player')}` : ''}
            {world.status !== 'published' && <span className="badge warn"> not published</span>}
          </p>
          <TagList tags={tags} />
          {world.world.description && <p>{world.world.description}</p>}
          <div className="row">
            {signedIn ? (
              <Link to={`/play/${encodeURIComponent(id)}`} className="button" data-testid="play">
                {playing ? 'Continue' : 'Play'}
              </Link>
            ) : (
              <>
                {guestPreview && world.status === 'published' && (
                  <Link
                    to={`/play/${encodeURIComponent(id)}`}
                    className="button"
                    data-testid="guest-play"
                    aria-describedby="guest-turns"
                  >
                    Try it now
                  </Link>
                )}
                <Link
                  to={`/signup?returnTo=${encodeURIComponent(`/play/${id}`)}`}
                  className={guestPreview && world.status === 'published' ? 'button secondary' : 'button'}
                  data-testid="play"
                >
                  Sign up to play
                </Link>
              </>
            )}
            {signedIn && cast.length >= 2 && (
              <button
                type="button"
                className="secondary"
                data-testid="play-group"
                disabled={starting === 'busy'}
                onClick={() => {
                  setStarting('busy');
                  api<{ session: { id: string } }>('/api/groups', { method: 'POST', json: { sceneWorldId: id } }).then(
                    (made) => navigate(`/groups/${encodeURIComponent(made.session.id)}`),
                    (err: Error) => setStarting(err.message),
                  );
                }}
                title={`A scene with ${cast.map((c) => c.name).join(', ')}`}
              >
                Play as a group scene
              </button>
            )}
            {starting && starting !== 'busy' && <span role="alert">{starting}</span>}
            {signedIn && world.roomsAllowed && (
              <button type="button" className="secondary" data-testid="play-together" onClick={() => setTogether(true)}>
                Play together
              </button>
            )}
            <FavoriteButton worldId={id} signedIn={signedIn} />
            {!signedIn && guestPreview && world.status === 'published' && (
              <span className="hint" id="guest-turns" data-testid="guest-turns">
                No account needed: {guestTurns > 0 ? `${guestTurns} turns an hour` : 'a few turns'} as a guest.
              </span>
            )}
            {world.canEdit && !inspecting && (
              <Link to={`/studio/${encodeURIComponent(id)}`} className="button secondary">
                Edit in the studio
              </Link>
            )}
          </div>
        </div>
      </section>
      {together && (
        <Suspense fallback={null}>
          <PlayTogetherDialog worldId={id} worldName={name} onClose={() => setTogether(false)} />
        </Suspense>
      )}
      {rooms && rooms.length > 0 && (
        <section className="card" aria-labelledby="rooms-heading">
          <h2 id="rooms-heading">Your rooms</h2>
          <ul className="list" data-testid="world-rooms">
            {rooms.map((r) => (
              <li key={r.id} className="spread">
                <Link to={`/rooms/${encodeURIComponent(r.id)}`}>
                  {r.role === 'host' ? 'Your room' : `${r.hostName}’s room`}
                </Link>
                <span className="hint">
                  {r.role}
                  {r.endedAt ? ' · ended' : ''} · {shortDateTime(r.updatedAt)}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {signedIn && sessions && sessions.length > 0 && (
        <section className="card" aria-labelledby="sessions-heading">
          <h2 id="sessions-heading">Your sessions</h2>
          <ul className="list" data-testid="world-sessions">
            {sessions.map((s) => (
              <li key={s.id} className="spread">
                <span>
                  <strong>{s.title || 'Untitled session'}</strong>{' '}
                  <span className="hint">
                    {count(s.messageCount, 'message')} · {shortDateTime(s.updatedAt)}
                  </span>
                </span>
                <button type="button" className="link" onClick={() => remove(s)} aria-label={`Delete session ${s.title || 'Untitled session'}`}>
                  Delete
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <UpdateHistory worldId={id} surfaceCanEdit={signedIn && !inspecting} level={2} />
    </div>
  );
}
