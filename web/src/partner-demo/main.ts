// A partner's game client, built only from the public partner kit: it never stores the identity
// token, exchanges it at once with its own API, and reacts to the platform's messages. It shows the
// partner-side rules of docs/PARTNERS.md §7: the name and picture its API synced at this session's
// start, and the lease's scope (iss, sub, sid); when the platform user changes, it ends the leases
// of the old platform login before it asks again.
import { mountFrameClient } from '@yumina/identity/browser';

const player = document.getElementById('player') as HTMLElement;
const picture = document.getElementById('picture') as HTMLImageElement;
const lease = document.getElementById('lease') as HTMLElement;
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
  player: { id: string; sub: string; displayName: string; picture: string | null };
  lease: { iss: string; sub: string; sid: string };
}

/** The lease this page holds (the partner's own session token, never the platform's). */
let current: PartnerSession | null = null;

/** The platform login behind the lease ended: end every lease of its (iss, sub, sid) on the partner's API. */
function endLease(): void {
  if (!current) return;
  const token = current.token;
  current = null;
  lease.textContent = '—';
  delete lease.dataset.sid;
  void fetch('/auth/platform/end', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    .then((res) => note(res.ok ? 'leases of the old platform login ended' : `ending the lease failed (${res.status})`))
    .catch(() => note('ending the lease failed'));
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
      if (current && current.lease.sid !== session.lease.sid) endLease();
      current = session;
      show('signed-in', session.player.displayName);
      player.dataset.sub = session.player.sub;
      player.dataset.account = session.player.id;
      picture.hidden = !session.player.picture;
      if (session.player.picture) picture.src = session.player.picture;
      lease.textContent = `iss ${session.lease.iss} · sub ${session.lease.sub} · sid ${session.lease.sid}`;
      lease.dataset.sid = session.lease.sid;
      note(`partner session started; profile synced (${session.player.displayName})`);
    },
    onUnauthenticated() {
      endLease();
      show('guest', 'guest');
      delete player.dataset.sub;
      delete player.dataset.account;
      picture.hidden = true;
      note('unauthenticated: playing as a guest');
    },
    onUnavailable() {
      note('identity temporarily unavailable; retrying');
    },
    onChanged() {
      endLease();
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
