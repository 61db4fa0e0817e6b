// A partner's game client, built only from the public partner kit: it never stores the identity
// token, exchanges it at once with its own API, and reacts to the platform's messages.
import { mountFrameClient } from '@yumina/identity/browser';

const player = document.getElementById('player') as HTMLElement;
const log = document.getElementById('log') as HTMLElement;
const note = (line: string) => {
  log.textContent = `${new Date().toISOString().slice(11, 19)} ${line}\n${log.textContent}`.slice(0, 4000);
};
const show = (state: string, text: string) => {
  player.dataset.state = state;
  player.textContent = text;
};

interface PartnerSession {
  token: string;
  player: { sub: string; displayName: string };
}

async function boot(): Promise<void> {
  const config = (await (await fetch('/partner-config.json')).json()) as { platformOrigin: string; platformOrigins?: string[] };
  // The platform page that frames this game (localhost or 127.0.0.1 locally), if it is one we know.
  const parent = window.location.ancestorOrigins?.[0] ?? (document.referrer ? new URL(document.referrer).origin : '');
  const platformOrigin = config.platformOrigins?.includes(parent) ? parent : config.platformOrigin;
  mountFrameClient<PartnerSession>({
    platformOrigin,
    async exchangeToken(token) {
      const res = await fetch('/auth/platform/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      if (!res.ok) throw new Error(`partner session refused (${res.status})`);
      return (await res.json()) as PartnerSession;
    },
    onSession(session) {
      show('signed-in', session.player.displayName);
      player.dataset.sub = session.player.sub;
      note('partner session started');
    },
    onUnauthenticated() {
      show('guest', 'guest');
      delete player.dataset.sub;
      note('unauthenticated: playing as a guest');
    },
    onUnavailable() {
      note('identity temporarily unavailable; retrying');
    },
    onChanged() {
      show('changed', 'changing…');
      note('platform user changed');
    },
  });
  const post = (type: string) => window.parent.postMessage({ type }, platformOrigin);
  document.getElementById('login')!.addEventListener('click', () => post('platform:auth:login'));
  document.getElementById('logout')!.addEventListener('click', () => post('platform:auth:logout'));
  post('platform:game:ready');
}

boot().catch((err: Error) => note(`boot failed: ${err.message}`));
