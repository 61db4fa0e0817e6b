import { useEffect, useState } from 'react';
import { useSession } from '../lib/session.tsx';

/** Where versus mode is played: the demo game's entry page (local mode publishes it; a deployment may not). */
const VERSUS_PATH = '/games/demo/';

/** Whether this deployment serves VERSUS_PATH: asked once per page load (HEAD), shared by every note. */
let versusServed: Promise<boolean> | undefined;

/** VERSUS_PATH when this deployment serves it, else null: the note links only to a page that exists. */
function useVersusPage(): string | null {
  const [href, setHref] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    versusServed ??= fetch(VERSUS_PATH, { method: 'HEAD' }).then(
      (res) => res.ok,
      () => false,
    );
    void versusServed.then((served) => {
      if (live && served) setHref(VERSUS_PATH);
    });
    return () => {
      live = false;
    };
  }, []);
  return href;
}

/** Seed 001 §3.3.7: what adventure difficulty means, and that versus is a separate mode (linked where it is served). */
export function DifficultyNote() {
  const versus = useVersusPage();
  return (
    <p className="entry-note" data-testid="difficulty-note">
      Adventure difficulty is 4 times the original weighted zombie budget of every wave: heavier zombies count for more, so it is
      not simply 4 times as many zombies. Versus mode is a separate mode, open to guests and without the companion
      {versus ? (
        <>
          : <a href={versus}>play versus in the demo game</a>.
        </>
      ) : (
        '.'
      )}
    </p>
  );
}

const LOGIN_PATH = `/login?returnTo=${encodeURIComponent('/app/settings')}`;

/**
 * Adventure needs an account. Sign-in happens in a separate tab (seed 001 §5.4), as on
 * /games/demo/: this tab keeps its page and picks the session up when the player comes back
 * (focus), or on its own a moment later. Known signed-in players never see this.
 */
export function AdventureSignIn() {
  const { refresh } = useSession();
  useEffect(() => {
    const check = () => void refresh();
    window.addEventListener('focus', check);
    document.addEventListener('visibilitychange', check);
    const timer = setInterval(check, 3_000);
    return () => {
      window.removeEventListener('focus', check);
      document.removeEventListener('visibilitychange', check);
      clearInterval(timer);
    };
  }, [refresh]);
  return (
    <section className="card narrow">
      <h1>Adventure needs an account</h1>
      <p>Adventure mode keeps your progress and your companion’s notebook with your platform account.</p>
      <DifficultyNote />
      <a href={LOGIN_PATH} target="_blank" rel="opener" className="button">
        Sign in in a new tab
      </a>
      <p className="hint">This tab stays as it is and continues once you are signed in.</p>
    </section>
  );
}
