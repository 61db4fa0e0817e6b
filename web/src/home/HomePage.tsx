import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { CardGrid, Cover, type WorldCardData } from '../library/world-card.tsx';
import { useTitle } from '../lib/title.ts';

interface RecentSession {
  id: string;
  worldId: string;
  worldName: string;
  messageCount: number;
  updatedAt: string;
  coverUrl: string | null;
}

function useCards(sort: string): WorldCardData[] | null {
  const [cards, setCards] = useState<WorldCardData[] | null>(null);
  useEffect(() => {
    api<{ worlds: WorldCardData[] }>(`/api/library?pageSize=6&sort=${sort}`).then((r) => setCards(r.worlds), () => setCards([]));
  }, [sort]);
  return cards;
}

/** `/`: what the platform is, continue playing (signed in), most played and newest worlds, how to connect an AI. */
export function HomePage() {
  useTitle(['Home']);
  const { info } = useSession();
  const account = info?.account ?? null;
  const popular = useCards('popular');
  const newest = useCards('new');
  const [recent, setRecent] = useState<RecentSession[] | null>(null);
  const [platform, setPlatform] = useState<{ officialAvailable: boolean; welcomeCredits: number } | null>(null);
  const [connected, setConnected] = useState<boolean | null>(null);
  useEffect(() => {
    api<{ officialAvailable: boolean; welcomeCredits: number }>('/api/platform').then(setPlatform, () => setPlatform(null));
  }, []);
  useEffect(() => {
    if (!account) return setRecent(null);
    api<{ sessions: RecentSession[] }>('/api/me/sessions').then((r) => setRecent(r.sessions), () => setRecent([]));
    api<{ hasConnection: boolean }>('/api/billing').then((r) => setConnected(r.hasConnection), () => setConnected(null));
  }, [account]);

  return (
    <div className="home">
      <section className="hero">
        <h1>Interactive fiction worlds, narrated by AI, turn by turn.</h1>
        <p>
          A world is a lorebook, variables, rules and its own interface. Pick one from the library and play it: you write what you do, the
          AI narrates what happens. Or open the studio and build your own.
        </p>
        <div className="row">
          <Link to="/library" className="button">
            Browse the library
          </Link>
          <Link to={account ? '/studio' : '/signup'} className="button secondary">
            {account ? 'My worlds' : 'Sign up to create'}
          </Link>
        </div>
      </section>

      {account && recent && recent.length > 0 && (
        <section aria-labelledby="continue-heading">
          <h2 id="continue-heading">Continue playing</h2>
          <ul className="cards" aria-label="Continue playing" data-testid="continue-playing">
            {recent.map((s) => (
              <li key={s.id} className="world-card">
                <Cover url={s.coverUrl} name={s.worldName} seed={s.worldId} />
                <div className="body">
                  <h3>
                    <Link to={`/play/${encodeURIComponent(s.worldId)}`}>{s.worldName}</Link>
                  </h3>
                  <span className="hint">
                    {s.messageCount} {s.messageCount === 1 ? 'message' : 'messages'} · {new Date(s.updatedAt).toLocaleDateString()}
                  </span>
                </div>
              </li>
            ))}
          </ul>
        </section>
      )}

      <AiHint signedIn={!!account} connected={connected} platform={platform} />

      <section aria-labelledby="popular-heading">
        <div className="spread">
          <h2 id="popular-heading">Most played</h2>
          <Link to="/library?sort=popular">See all</Link>
        </div>
        {popular ? <CardGrid worlds={popular} label="Most played worlds" /> : <p>Loading…</p>}
      </section>
      <section aria-labelledby="newest-heading">
        <div className="spread">
          <h2 id="newest-heading">Newest</h2>
          <Link to="/library">See all</Link>
        </div>
        {newest ? <CardGrid worlds={newest} label="Newest worlds" /> : <p>Loading…</p>}
        {newest?.length === 0 && <p className="hint">Nothing is published yet. Be the first: open the studio.</p>}
      </section>
    </div>
  );
}

/** How the AI gets paid for: platform credits when they are on, or the player's own provider. */
function AiHint({ signedIn, connected, platform }: { signedIn: boolean; connected: boolean | null; platform: { officialAvailable: boolean; welcomeCredits: number } | null }) {
  if (signedIn && connected) return null;
  return (
    <section className="card" aria-labelledby="ai-heading" data-testid="ai-hint">
      <h2 id="ai-heading">How the AI is connected</h2>
      {platform?.officialAvailable ? (
        <p>
          Worlds play on this platform&apos;s AI with credits{platform.welcomeCredits > 0 ? ` (new accounts get ${platform.welcomeCredits})` : ''}. You
          can also connect your own OpenAI-compatible provider (an API key and a base URL) and play on it instead.
        </p>
      ) : (
        <p>
          To play, connect an OpenAI-compatible AI provider: in Settings, under AI connection, enter its base URL, a model and your API key. The
          key is stored encrypted and only used for your own turns.
        </p>
      )}
      <Link to={signedIn ? '/app/settings#ai-config' : `/signup?returnTo=${encodeURIComponent('/app/settings#ai-config')}`} className="button secondary">
        {signedIn ? 'Connect a provider' : 'Sign up and connect a provider'}
      </Link>
    </section>
  );
}
