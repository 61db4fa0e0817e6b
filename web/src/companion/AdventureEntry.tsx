import { useEffect } from 'react';
import { useSession } from '../lib/session.tsx';

/** Seed 001 §3.3.7: what adventure difficulty means, and that versus is a separate mode. */
export function DifficultyNote() {
  return (
    <p className="entry-note" data-testid="difficulty-note">
      Adventure difficulty is 4 times the original weighted zombie budget of every wave: heavier zombies count for more, so it is
      not simply 4 times as many zombies. Versus mode is a separate mode, open to guests and without the companion.
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
