/** JSON calls to the platform API with the shared error shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reads started before their page asked (prefetch), each answered once to the first `api` call of its method and path. */
const early = new Map<string, { at: number; answer: Promise<unknown> }>();
/** A prefetched read older than this is read again instead (a page opened much later wants fresh data). */
const EARLY_FOR_MS = 10_000;
const earlyKey = (path: string, method: string) => (method === 'GET' ? path : `${method} ${path}`);

/**
 * Starts a read of `path` now, for the page about to render (routes.tsx): its chunk and its data load
 * in parallel instead of one after the other. The page's own `api(path)` (with the same method and no
 * body) takes the answer; the promise returned lets a preload chain the reads that depend on it
 * (lib/player-reads.ts). `POST` only for a request without a body that changes nothing the page
 * shows (the player's asset token).
 */
export function prefetch<T = unknown>(path: string, method: 'GET' | 'POST' = 'GET'): Promise<T> {
  const key = earlyKey(path, method);
  const held = early.get(key);
  if (held && performance.now() - held.at < EARLY_FOR_MS) return held.answer as Promise<T>;
  const answer = request<T>(path, { method });
  answer.catch(() => {}); // reported to the page that takes it
  early.set(key, { at: performance.now(), answer });
  return answer;
}

export async function api<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  if (init.json === undefined) {
    const key = earlyKey(path, init.method ?? 'GET');
    const held = early.get(key);
    early.delete(key);
    if (held && performance.now() - held.at < EARLY_FOR_MS) return held.answer as Promise<T>;
  }
  return request<T>(path, init);
}

async function request<T>(path: string, init: { method?: string; json?: unknown }): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers: init.json === undefined ? {} : { 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    credentials: 'same-origin',
  });
  return answerOf<T>(res, 'Request');
}

/** POSTs a picked file as the request body (its own type as the content type); the JSON answer, or the API's error. */
export async function uploadFile<T>(path: string, file: File): Promise<T> {
  return answerOf<T>(await fetch(path, { method: 'POST', body: file, credentials: 'same-origin' }), 'Upload');
}

async function answerOf<T>(res: Response, what: 'Request' | 'Upload'): Promise<T> {
  const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? 'HTTP_ERROR', body?.error?.message ?? `${what} failed (${res.status})`);
  return body as T;
}

/** A file input's change handler: hands the picked file on and clears the input, so picking the same file again fires too. */
export function onFilePicked(handle: (file: File) => void): (e: { target: HTMLInputElement }) => void {
  return (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) handle(file);
  };
}

export interface Account {
  id: string;
  email: string;
  emailVerified: boolean;
  username: string | null;
  displayName: string;
  picture: string | null;
  isAdmin: boolean;
}

/** Who is signed in (lib/session.tsx reads it; the player's preload starts it early: lib/player-reads.ts). */
export const SESSION_INFO_URL = '/api/auth/session';

export interface SessionInfo {
  account: Account | null;
  identities?: Record<string, string>;
  session: { id: string; expiresAt: string } | null;
}
