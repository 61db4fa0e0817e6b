import { type FrameMessage, type PageMessage, parseFrameMessage } from './bridge-messages.ts';
import {
  type DocumentLike,
  type EventSourceLike,
  globalTimers,
  type MessageEventLike,
  type PostTarget,
  peekJwtPayload,
  requireExactOrigin,
  type TimerApi,
} from './bridge-dom.ts';

/**
 * The landing page's side of the bridge (§6.1, §3, issue item 5). Browser-safe; every browser
 * object is injected so the logic runs in unit tests and in a plain `<script type=module>` page.
 *
 * - Only the newest pending `platform:auth:request` is answered, echoing its requestId.
 * - While the session is still loading, the answer waits; it never says unauthenticated early.
 * - Token endpoint: 200 → `platform:auth:token`; 401 → `platform:auth:unauthenticated`;
 *   anything else (and network failure) → `platform:auth:error` with `temporarily_unavailable`.
 * - Login, logout and user switch send `platform:auth:changed`; an in-flight token fetch begun
 *   before a change is dropped. The session is revalidated on focus regain, when the page
 *   becomes visible, on an interval while visible, and when `sessionChanged()` is called.
 * - Messages are accepted only when `event.source` is the frame's window and `event.origin`
 *   equals the client origin exactly; malformed messages are dropped. Posts always name the
 *   client origin as target, never `'*'`.
 */

/** What the page knows about the platform login session. */
export type SessionSnapshot = { signedIn: false } | { signedIn: true; accountId: string; sessionId?: string };

export interface TokenResponseLike {
  readonly status: number;
  json(): Promise<unknown>;
}

export type FetchLike = (url: string, init: { method: 'POST'; credentials: 'same-origin'; headers: Record<string, string> }) => Promise<TokenResponseLike>;

export interface BridgeControllerOptions {
  /** The top window: receives `message` and `focus` events. */
  window: EventSourceLike;
  /** For `visibilitychange` and the visible-only interval. */
  document?: DocumentLike;
  /** The frame's window (`iframe.contentWindow`), read at every use. */
  frame: () => PostTarget | null | undefined;
  /** Exact origin of the partner client. */
  clientOrigin: string;
  /** POST URL of the token endpoint, e.g. `/api/partners/demo/token`. */
  tokenUrl: string;
  fetch: FetchLike;
  /** Resolves the current platform login session. */
  loadSession: () => Promise<SessionSnapshot>;
  /** Sends the top window to platform login, returning to the same landing path. */
  login: () => void;
  /** Ends the platform login session. The controller then revalidates and announces the change. */
  logout: () => Promise<void>;
  /** `platform:game:ready`: hide the loading overlay. */
  onGameReady?: () => void;
  /** Revalidation interval while the page is visible (0 turns it off). Default 4000 ms. */
  revalidateIntervalMs?: number;
  timers?: TimerApi;
}

export interface BridgeController {
  /** Revalidate the session now (call it from a cross-tab signal or after an in-page login). */
  sessionChanged(): Promise<void>;
  /** Settles when the current session load, if any, has been applied (for tests and boot code). */
  idle(): Promise<void>;
  dispose(): void;
}

type Known = { key: string; signedIn: boolean; accountId: string | null };

type TokenOutcome =
  | { kind: 'token'; token: string; expiresAt: string }
  | { kind: 'unauthenticated' }
  | { kind: 'error' };

function sessionKey(snapshot: SessionSnapshot): string {
  return snapshot.signedIn ? `user:${snapshot.accountId}:${snapshot.sessionId ?? ''}` : 'anonymous';
}

export function createBridgeController(options: BridgeControllerOptions): BridgeController {
  const clientOrigin = requireExactOrigin(options.clientOrigin, 'clientOrigin');
  const timers = options.timers ?? globalTimers;
  const intervalMs = options.revalidateIntervalMs ?? 4000;

  let known: Known | null = null; // null until the first session load succeeds
  let loading = false; // requests wait while true
  let loadSeq = 0; // only the newest session load is applied
  let loadPromise: Promise<void> = Promise.resolve();
  let epoch = 0; // bumped on every change; results of older fetches are dropped
  let pending: string | null = null; // newest unanswered requestId
  let inflight: { epoch: number } | null = null;
  let mismatchEpoch = -1; // epoch in which a token for another user was seen
  let disposed = false;

  const post = (message: PageMessage) => {
    if (disposed) return;
    options.frame()?.postMessage(message, clientOrigin);
  };

  const answer = (message: PageMessage) => post(message);

  const announceChange = () => {
    epoch++;
    pending = null; // the frame invalidates outstanding requests on changed and asks again
    post({ type: 'platform:auth:changed' });
  };

  const apply = (snapshot: SessionSnapshot) => {
    const next: Known = {
      key: sessionKey(snapshot),
      signedIn: snapshot.signedIn,
      accountId: snapshot.signedIn ? snapshot.accountId : null,
    };
    const previous = known;
    known = next;
    if (previous && previous.key !== next.key) announceChange();
  };

  /** Loads the session; `blocking` makes requests wait meanwhile (boot and logout). */
  const load = (blocking: boolean): Promise<void> => {
    const seq = ++loadSeq;
    if (blocking) loading = true;
    loadPromise = (async () => {
      let snapshot: SessionSnapshot | null = null;
      try {
        snapshot = await options.loadSession();
      } catch {
        snapshot = null;
      }
      if (disposed || seq !== loadSeq) return;
      loading = false;
      if (snapshot) apply(snapshot);
      serve();
    })();
    return loadPromise;
  };

  const fetchToken = async (): Promise<TokenOutcome> => {
    try {
      const response = await options.fetch(options.tokenUrl, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { accept: 'application/json' },
      });
      if (response.status === 401) return { kind: 'unauthenticated' };
      if (response.status !== 200) return { kind: 'error' };
      const body = (await response.json()) as { token?: unknown; expiresAt?: unknown } | null;
      if (typeof body?.token !== 'string' || typeof body.expiresAt !== 'string') return { kind: 'error' };
      return { kind: 'token', token: body.token, expiresAt: body.expiresAt };
    } catch {
      return { kind: 'error' };
    }
  };

  function serve(): void {
    if (disposed || pending === null || loading) return;
    if (known === null) {
      // The session could not be determined: not a logout. Say so and try loading again.
      const requestId = pending;
      pending = null;
      answer({ type: 'platform:auth:error', requestId, code: 'temporarily_unavailable' });
      void load(true);
      return;
    }
    if (!known.signedIn) {
      const requestId = pending;
      pending = null;
      answer({ type: 'platform:auth:unauthenticated', requestId });
      return;
    }
    if (inflight && inflight.epoch === epoch) return; // its result answers the newest pending request
    const ticket = { epoch };
    inflight = ticket;
    void fetchToken().then((outcome) => {
      if (inflight === ticket) inflight = null;
      if (disposed || ticket.epoch !== epoch) {
        serve(); // begun before a change: dropped; a request that arrived since gets its own fetch
        return;
      }
      if (pending === null) return;
      const requestId = pending;
      if (outcome.kind === 'token') {
        const sub = peekJwtPayload(outcome.token)?.sub;
        if (known?.signedIn && sub !== known.accountId) {
          if (mismatchEpoch !== epoch) {
            // The user changed underneath us (another tab): revalidate, which announces the change.
            mismatchEpoch = epoch;
            void load(false);
            return;
          }
          // Still inconsistent after revalidating: do not hand out a token for someone else.
          pending = null;
          answer({ type: 'platform:auth:error', requestId, code: 'temporarily_unavailable' });
          return;
        }
        pending = null;
        answer({ type: 'platform:auth:token', requestId, token: outcome.token, expiresAt: outcome.expiresAt });
      } else if (outcome.kind === 'unauthenticated') {
        pending = null;
        answer({ type: 'platform:auth:unauthenticated', requestId });
        void load(false); // the session ended: revalidating announces the change
      } else {
        pending = null;
        answer({ type: 'platform:auth:error', requestId, code: 'temporarily_unavailable' });
      }
    });
  }

  const logout = async () => {
    epoch++; // drop any token fetch begun before the logout
    loadSeq++; // and any session load begun before it
    loading = true;
    try {
      await options.logout();
    } catch {
      // The revalidation below tells whether the session really ended.
    }
    if (!disposed) await load(true);
  };

  const handle = (message: FrameMessage) => {
    switch (message.type) {
      case 'platform:auth:request':
        pending = message.requestId;
        serve();
        return;
      case 'platform:auth:login':
        options.login();
        return;
      case 'platform:auth:logout':
        void logout();
        return;
      case 'platform:game:ready':
        options.onGameReady?.();
        return;
    }
  };

  const onMessage = (event: MessageEventLike) => {
    if (disposed) return;
    const frameWindow = options.frame();
    if (!frameWindow || event.source !== frameWindow) return;
    if (event.origin !== clientOrigin) return;
    const message = parseFrameMessage(event.data);
    if (message) handle(message);
  };

  const visible = () => (options.document?.visibilityState ?? 'visible') === 'visible';
  const revalidate = () => {
    if (!disposed && !loading) void load(false);
  };
  const onVisibility = () => {
    if (visible()) revalidate();
  };

  options.window.addEventListener('message', onMessage);
  options.window.addEventListener('focus', revalidate);
  options.document?.addEventListener('visibilitychange', onVisibility);
  const interval = intervalMs > 0 ? timers.setInterval(() => visible() && revalidate(), intervalMs) : null;
  void load(true);

  return {
    sessionChanged: () => (disposed ? Promise.resolve() : load(false)),
    idle: async () => {
      let seen: Promise<void> | null = null;
      while (seen !== loadPromise) {
        seen = loadPromise;
        await seen;
      }
    },
    dispose: () => {
      disposed = true;
      options.window.removeEventListener('message', onMessage);
      options.window.removeEventListener('focus', revalidate);
      options.document?.removeEventListener('visibilitychange', onVisibility);
      if (interval !== null) timers.clearInterval(interval);
    },
  };
}

export interface MountLandingBridgeOptions
  extends Omit<BridgeControllerOptions, 'window' | 'document' | 'frame' | 'fetch'> {
  fetch?: FetchLike;
}

/** Mounts the controller on the real page: `mountLandingBridge(iframe, {...})` from a module script. */
export function mountLandingBridge(iframe: { readonly contentWindow: PostTarget | null }, options: MountLandingBridgeOptions) {
  return createBridgeController({
    ...options,
    window: globalThis as unknown as EventSourceLike,
    document: globalThis.document as unknown as DocumentLike | undefined,
    frame: () => iframe.contentWindow,
    fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
  });
}
