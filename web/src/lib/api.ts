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

export async function api<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers: init.json === undefined ? {} : { 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? 'HTTP_ERROR', body?.error?.message ?? `Request failed (${res.status})`);
  return body as T;
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

export interface SessionInfo {
  account: Account | null;
  identities?: Record<string, string>;
  session: { id: string; expiresAt: string } | null;
}
