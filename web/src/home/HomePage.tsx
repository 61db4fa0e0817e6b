import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useAccountChanges, useSession } from '../lib/session.tsx';
import { CardGrid, Cover, type WorldCardData } from '../library/world-card.tsx';
import { PageLoading } from '../shell/PageLoading.tsx';
import { HOME_URL } from './home-data.ts';
import { useTitle } from '../lib/title.ts';
import { shortDate } from '../lib/dates.ts';
import { count } from '../lib/text.ts';

interface RecentSession {
  id: string;
  worldId: string;
  worldName: string;
  messageCount: number;
  updatedAt: string;
  coverUrl: string | null;
}

/** GET /api/home: everything the home page shows, in one read (signed in: the player's recent sessions and whether they connected an AI). */
export interface HomeData {
  popular: WorldCardData[];
  newest: WorldCardData[];
  platform: { officialAvailable: boolean; welcomeCredits: number; guestPreview?: boolean; partners?: string[] };
  recent: RecentSession[] | null;
  hasConnection: boolean | null;
}

/**
 * The home page's data: one read when the page opens (prefetched with its chunk, routes.tsx; the
 * cookie goes with it, so it is the signed-in player's already), and again only when the account
 * changes afterwards (signing out or in elsewhere in the app).
 */
function useHome(accountId: string | null | undefined): HomeData | null {
  const [home, setHome] = useState<HomeData | null>(null);
  const reads = useAccountChanges(accountId);
  useEffect(() => {
    let live = true;
    api<HomeData>(HOME_URL).then(
      (r) => live && setHome(r),
      () => live && setHome({ popular: [], newest: [], platform: { officialAvailable: false, welcomeCredits: 0 }, recent: null, hasConnection: null }),
    );
    return () => {
      live = false;
    };
  }, [reads]);
  return home;
}

/** `/`: what the platform is, continue playing (signed in), most played and newest worlds, how to connect an AI. */
export function HomePage() {
  useTitle(['Home']);
  const { info, loading } = useSession();
  const account = info?.account ?? null;
  const home = useHome(loading ? undefined : (account?.id ?? null));
  const recent = account ? home?.recent : null;

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

      {/* Everything below the hero appears at once, when the page's one read and the session are in: nothing above it moves. */}
      {!home || loading ? (
        <PageLoading />
      ) : (
        <>
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
                        {count(s.messageCount, 'message')} · {shortDate(s.updatedAt)}
                      </span>
                    </div>
                  </li>
                ))}
              </ul>
            </section>
          )}

          <AiHint signedIn={!!account} connected={home.hasConnection} platform={home.platform} />
          <MoreToTry signedIn={!!account} platform={home.platform} />

          <section aria-labelledby="popular-heading">
            <div className="spread">
              <h2 id="popular-heading">Most played</h2>
              <Link to="/library?sort=popular">See all</Link>
            </div>
            <CardGrid worlds={home.popular} label="Most played worlds" eager={3} />
          </section>
          <section aria-labelledby="newest-heading">
            <div className="spread">
              <h2 id="newest-heading">Newest</h2>
              <Link to="/library">See all</Link>
            </div>
            <CardGrid worlds={home.newest} label="Newest worlds" />
            {home.newest.length === 0 && <p className="hint">Nothing is published yet. Be the first: open the studio.</p>}
          </section>
        </>
      )}
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
          can also connect your own provider (OpenAI-compatible, Anthropic or Google Gemini: an API key and a base URL) and play on it instead.
        </p>
      ) : (
        <p>
          To play, connect an AI provider (OpenAI-compatible, Anthropic or Google Gemini): in Settings, under AI connection, enter its base URL, a model and your API key. The
          key is stored encrypted and only used for your own turns.
        </p>
      )}
      <Link to={signedIn ? '/app/settings#ai-config' : `/signup?returnTo=${encodeURIComponent('/app/settings#ai-config')}`} className="button secondary">
        {signedIn ? 'Connect a provider' : 'Sign up and connect a provider'}
      </Link>
    </section>
  );
}

/**
 * What else there is to play (issue 30 E): the adventure board, the partner games this platform
 * frames, and for a guest the preview of any published world when the platform allows it.
 */
function MoreToTry({ signedIn, platform }: { signedIn: boolean; platform: HomeData['platform'] }) {
  const partners = platform.partners ?? [];
  return (
    <section className="card" aria-labelledby="try-heading" data-testid="more-to-try">
      <h2 id="try-heading">More to try</h2>
      <ul className="try-list">
        <li>
          <Link to="/adventure/demo">The adventure board</Link>: plant a lawn and hold it against waves of zombies, with a companion who talks, offers and keeps a notebook (an account keeps your progress).
        </li>
        {partners.map((slug) => (
          <li key={slug}>
            {/* A page the server answers (the partner's landing page), not one of the app's routes. */}
            <a href={`/${encodeURIComponent(slug)}`}>The partner game “{slug}”</a>: a game on another site that knows you by your account here.
          </li>
        ))}
        {!signedIn && platform.guestPreview && (
          <li data-testid="guest-preview-offer">
            Try before you sign up: open any world from the <Link to="/library">library</Link> and play its preview as a guest.
          </li>
        )}
      </ul>
    </section>
  );
}
