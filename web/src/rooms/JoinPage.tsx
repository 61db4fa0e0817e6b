/**
 * /rooms/join#<token>: an invite link (the token stays in the fragment, which no request carries).
 * It shows what the link invites to (the world, the host, the role) and joins after sign-in: a
 * signed-out visitor signs in (or signs up) and comes back here, where the join happens at once.
 */
import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { shortDateTime } from '../lib/dates.ts';
import { PageLoading } from '../shell/PageLoading.tsx';
import './rooms.css';

interface Preview {
  role: 'player' | 'spectator';
  worldId: string;
  worldName: string;
  hostName: string;
  expiresAt: string;
}

const tokenOf = () => decodeURIComponent(window.location.hash.slice(1));

export function JoinPage() {
  const { loading, info } = useSession();
  const [token] = useState(tokenOf);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joining, setJoining] = useState(false);
  useTitle(['Join a room', preview?.worldName]);
  // Back from signing in (or up) for this link: join without another click.
  const auto = new URLSearchParams(window.location.search).get('signedIn') === '1';
  const back = `/rooms/join?signedIn=1#${encodeURIComponent(token)}`;

  useEffect(() => {
    if (!token) {
      setError('This address carries no invite. Open the whole link the host sent you.');
      return;
    }
    api<Preview>('/api/room-invites/preview', { json: { token } }).then(setPreview, (err: Error) => setError(err.message));
  }, [token]);

  async function join() {
    setJoining(true);
    setError(null);
    try {
      const joined = await api<{ roomId: string }>('/api/room-invites/join', { json: { token } });
      // the link's token leaves the address bar and the history
      window.history.replaceState(null, '', '/rooms/join');
      navigate(`/rooms/${encodeURIComponent(joined.roomId)}`);
    } catch (err) {
      setError((err as Error).message);
      setJoining(false);
    }
  }

  const signedIn = !!info?.account;
  useEffect(() => {
    if (auto && signedIn && preview && !joining && !error) void join();
  }, [auto, signedIn, preview]);

  if (error)
    return (
      <section className="card narrow" role="alert" data-testid="join-error">
        <h2>This invite does not work</h2>
        <p>{error}</p>
        <Link to="/library">Find a world in the library</Link>
      </section>
    );
  if (loading || !preview) return <PageLoading />;
  return (
    <section className="card narrow room-join" data-testid="join-page">
      <p className="hint">You are invited to play together</p>
      <h2 data-testid="join-world">{preview.worldName}</h2>
      <p>
        <strong data-testid="join-host">{preview.hostName}</strong> invites you as <strong data-testid="join-role">{preview.role === 'player' ? 'a player' : 'a spectator'}</strong>
        {preview.role === 'player' ? ': you write with the others, and the AI answers the round.' : ': you read along as the others play.'}
      </p>
      <p className="hint">The host pays for the AI’s replies; your credits are never spent in someone else’s room.</p>
      {signedIn ? (
        <div className="row">
          <button type="button" onClick={() => void join()} disabled={joining}>
            {joining ? 'Joining…' : 'Join the room'}
          </button>
          <span className="hint">as {info.account!.displayName}</span>
        </div>
      ) : (
        <div className="row">
          <Link to={`/login?returnTo=${encodeURIComponent(back)}`} className="button">
            Sign in to join
          </Link>
          <Link to={`/signup?returnTo=${encodeURIComponent(back)}`} className="button secondary">
            Create an account
          </Link>
        </div>
      )}
      <p className="hint">The link works until {shortDateTime(preview.expiresAt)}.</p>
    </section>
  );
}
