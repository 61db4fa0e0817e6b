import { type FrameMessage, type PageMessage, newRequestId as defaultRequestId, parsePageMessage } from './bridge-messages.ts';
import {
  type EventSourceLike,
  globalTimers,
  type MessageEventLike,
  type PostTarget,
  requireExactOrigin,
  type TimerApi,
} from './bridge-dom.ts';

/**
 * The partner client's side of the bridge (issue item 6b). Browser-safe; runs inside the frame.
 *
 * - Detects the platform host by `host=platform` in its own URL, with the referrer as fallback.
 * - Sends an auth request on boot, about once a minute after a successful exchange, after
 *   `changed`, and after an error with exponential backoff.
 * - Never stores a token: it hands it at once to `exchangeToken` (which posts it to the partner
 *   API) and keeps no reference.
 * - Drops replies whose requestId is not the newest pending one; `changed` invalidates pending requests.
 * - `error` is not a logout: it keeps the current partner session, retries with backoff, and never
 *   leads to a replacement account.
 * - Accepts messages only from its parent window whose origin is the platform origin or the
 *   configured dev origin; posts to that origin explicitly.
 */

export interface FrameWindowLike extends EventSourceLike {
  readonly location: { readonly href: string };
  readonly document?: { readonly referrer: string };
  readonly parent: PostTarget;
}

export interface FrameClientOptions<S = unknown> {
  window: FrameWindowLike;
  /** The platform origin, e.g. https://yumina.example. */
  platformOrigin: string;
  /** An extra platform origin accepted during development, e.g. http://localhost:3000. */
  devOrigin?: string;
  /** Posts the token to the partner API (e.g. POST /auth/platform/session) and returns the partner session. */
  exchangeToken: (token: string) => Promise<S>;
  /** A partner session was obtained for the platform user. */
  onSession?: (session: S) => void;
  /** The platform confirmed nobody is signed in: play as a guest. */
  onUnauthenticated?: () => void;
  /** Identity could not be determined now. Keep the current state; a retry is scheduled. */
  onUnavailable?: () => void;
  /** The platform user changed: drop the partner session of the previous user. */
  onChanged?: () => void;
  /** Default 60 000 ms. */
  renewIntervalMs?: number;
  /** An unanswered request counts as unavailable after this long. Default 10 000 ms. */
  replyTimeoutMs?: number;
  /** Backoff after errors: initial delay, doubled per failure up to the maximum. Defaults 2 s and 60 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  timers?: TimerApi;
  newRequestId?: () => string;
  /** Random source for backoff jitter (0 ≤ x < 1). */
  random?: () => number;
}

export interface FrameClient {
  /** The origin the client talks to, or null when it is not embedded by the platform. */
  readonly hostOrigin: string | null;
  /** Sends a fresh auth request now (fresh proof needed). */
  refresh(): void;
  /** Asks the platform page to log in (the top window navigates). */
  login(): void;
  /** Asks the platform page to end the login session; `changed` follows. */
  logout(): void;
  /** Hides the platform's loading overlay. */
  gameReady(): void;
  dispose(): void;
}

/**
 * The platform origin embedding this frame, or null. `host=platform` in the frame URL selects the
 * platform; the referrer is the fallback. A referrer on the dev origin selects the dev origin.
 */
export function detectPlatformHost(
  href: string,
  referrer: string | undefined,
  platformOrigin: string,
  devOrigin?: string,
): string | null {
  let refOrigin: string | null = null;
  try {
    refOrigin = referrer ? new URL(referrer).origin : null;
  } catch {
    refOrigin = null;
  }
  if (devOrigin && refOrigin === devOrigin) return devOrigin;
  let flagged = false;
  try {
    flagged = new URL(href).searchParams.get('host') === 'platform';
  } catch {
    flagged = false;
  }
  if (flagged) return platformOrigin;
  return refOrigin === platformOrigin ? platformOrigin : null;
}

export function createFrameClient<S>(options: FrameClientOptions<S>): FrameClient {
  const platformOrigin = requireExactOrigin(options.platformOrigin, 'platformOrigin');
  const devOrigin = options.devOrigin ? requireExactOrigin(options.devOrigin, 'devOrigin') : undefined;
  const timers = options.timers ?? globalTimers;
  const renewMs = options.renewIntervalMs ?? 60_000;
  const replyTimeoutMs = options.replyTimeoutMs ?? 10_000;
  const backoffInitial = options.backoffInitialMs ?? 2_000;
  const backoffMax = options.backoffMaxMs ?? 60_000;
  const nextId = options.newRequestId ?? defaultRequestId;
  const random = options.random ?? Math.random;
  const win = options.window;

  const hostOrigin = detectPlatformHost(win.location.href, win.document?.referrer, platformOrigin, devOrigin);
  const accepted = new Set([platformOrigin, ...(devOrigin ? [devOrigin] : [])]);

  let pending: string | null = null;
  let epoch = 0;
  let failures = 0;
  let replyTimer: unknown = null;
  let nextTimer: unknown = null;
  let disposed = false;

  const post = (message: FrameMessage) => {
    if (!disposed && hostOrigin) win.parent.postMessage(message, hostOrigin);
  };

  const clearTimers = () => {
    if (replyTimer !== null) timers.clearTimeout(replyTimer);
    if (nextTimer !== null) timers.clearTimeout(nextTimer);
    replyTimer = null;
    nextTimer = null;
  };

  const schedule = (ms: number) => {
    if (nextTimer !== null) timers.clearTimeout(nextTimer);
    nextTimer = timers.setTimeout(() => {
      nextTimer = null;
      request();
    }, ms);
  };

  const backoff = () => {
    const base = Math.min(backoffMax, backoffInitial * 2 ** failures);
    failures++;
    schedule(Math.round(base * (0.8 + 0.4 * random())));
  };

  function request(): void {
    if (disposed || !hostOrigin) return;
    clearTimers();
    const requestId = nextId();
    pending = requestId;
    post({ type: 'platform:auth:request', requestId });
    replyTimer = timers.setTimeout(() => {
      replyTimer = null;
      if (pending !== requestId) return;
      pending = null;
      options.onUnavailable?.();
      backoff();
    }, replyTimeoutMs);
  }

  const exchange = async (token: string) => {
    const startedIn = epoch;
    let session: S;
    try {
      session = await options.exchangeToken(token);
    } catch {
      if (disposed || startedIn !== epoch) return;
      options.onUnavailable?.();
      backoff();
      return;
    }
    if (disposed || startedIn !== epoch) return; // the user changed meanwhile: this session is stale
    failures = 0;
    options.onSession?.(session);
    schedule(renewMs);
  };

  const handle = (message: PageMessage) => {
    if (message.type === 'platform:auth:changed') {
      epoch++;
      pending = null;
      failures = 0;
      options.onChanged?.();
      request();
      return;
    }
    if (message.requestId !== pending) return; // stale or unknown reply
    pending = null;
    if (replyTimer !== null) timers.clearTimeout(replyTimer);
    replyTimer = null;
    if (message.type === 'platform:auth:token') {
      void exchange(message.token);
    } else if (message.type === 'platform:auth:unauthenticated') {
      failures = 0;
      options.onUnauthenticated?.();
    } else {
      options.onUnavailable?.();
      backoff();
    }
  };

  const onMessage = (event: MessageEventLike) => {
    if (disposed || !hostOrigin) return;
    if (event.source !== win.parent || !accepted.has(event.origin)) return;
    const message = parsePageMessage(event.data);
    if (message) handle(message);
  };

  if (hostOrigin) {
    win.addEventListener('message', onMessage);
    request();
  }

  return {
    hostOrigin,
    refresh: () => request(),
    login: () => post({ type: 'platform:auth:login' }),
    logout: () => post({ type: 'platform:auth:logout' }),
    gameReady: () => post({ type: 'platform:game:ready' }),
    dispose: () => {
      disposed = true;
      clearTimers();
      win.removeEventListener('message', onMessage);
    },
  };
}

/** Mounts the client in the real frame from a module script. */
export function mountFrameClient<S>(options: Omit<FrameClientOptions<S>, 'window'>): FrameClient {
  return createFrameClient({ ...options, window: globalThis as unknown as FrameWindowLike });
}
