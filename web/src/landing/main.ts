// The partner landing page: frames the partner client and answers its identity requests.
import { landingFrameUrl, mountLandingBridge, type PartnerPublicConfig, type SessionSnapshot } from '@yumina/identity/browser';

const slug = window.location.pathname.split('/')[1] ?? '';
const frame = document.getElementById('game') as HTMLIFrameElement;
const overlay = document.getElementById('overlay') as HTMLElement;
const unavailable = document.getElementById('unavailable') as HTMLElement;

async function loadSession(): Promise<SessionSnapshot> {
  const res = await fetch('/api/auth/session', { credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw new Error(`session check failed (${res.status})`);
  const body = (await res.json()) as { account: { id: string } | null; session: { id: string } | null };
  return body.account ? { signedIn: true, accountId: body.account.id, sessionId: body.session?.id } : { signedIn: false };
}

async function boot(): Promise<void> {
  const res = await fetch(`/api/partners/${encodeURIComponent(slug)}/config`);
  const config = res.ok ? ((await res.json()) as PartnerPublicConfig) : null;
  if (!config?.enabled) {
    frame.hidden = true;
    overlay.hidden = true;
    unavailable.hidden = false;
    return;
  }
  const hide = () => {
    overlay.hidden = true;
  };
  frame.addEventListener('load', hide, { once: true });
  const controller = mountLandingBridge(frame, {
    clientOrigin: config.clientOrigin,
    tokenUrl: `/api/partners/${encodeURIComponent(slug)}/token`,
    loadSession,
    login: () => {
      const back = window.location.pathname + window.location.search;
      window.location.assign(`/login?returnTo=${encodeURIComponent(back)}`);
    },
    logout: async () => {
      await fetch('/api/auth/logout', { method: 'POST', credentials: 'same-origin' });
    },
    onGameReady: hide,
  });
  // Set the frame only once the bridge listens, so the first request is never missed.
  frame.src = landingFrameUrl(config.clientOrigin, new URLSearchParams(window.location.search).get('path'));
  window.addEventListener('pagehide', () => controller.dispose());
}

boot().catch(() => {
  overlay.textContent = 'The game could not be loaded. Refresh to try again.';
});
