/**
 * The few window/document shapes the bridge uses, so the page controller and the frame client
 * can run against real DOM objects or plain test doubles. Browser-safe.
 */

export interface MessageEventLike {
  readonly source: unknown;
  readonly origin: string;
  readonly data: unknown;
}

export interface PostTarget {
  postMessage(message: unknown, targetOrigin: string): void;
}

export interface EventSourceLike {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- DOM listeners receive DOM event types
  addEventListener(type: string, listener: (event: any) => void): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- DOM listeners receive DOM event types
  removeEventListener(type: string, listener: (event: any) => void): void;
}

export interface DocumentLike extends EventSourceLike {
  readonly visibilityState?: string;
}

export interface TimerApi {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const globalTimers: TimerApi = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  setInterval: (callback, ms) => globalThis.setInterval(callback, ms),
  clearInterval: (handle) => globalThis.clearInterval(handle as ReturnType<typeof setInterval>),
};

/** `origin` must be a real origin: no `'*'`, no `'null'`, no path. Returns it unchanged. */
export function requireExactOrigin(origin: string, what: string): string {
  let parsed: URL | null = null;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = null;
  }
  if (!parsed || parsed.origin === 'null' || parsed.origin !== origin) {
    throw new TypeError(`${what} must be an exact origin such as https://game.example (got ${JSON.stringify(origin)})`);
  }
  return origin;
}

/** Reads the payload of a JWT without verifying it (the page only compares `sub` with its session). */
export function peekJwtPayload(token: string): Record<string, unknown> | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const padded = b64 + '='.repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
