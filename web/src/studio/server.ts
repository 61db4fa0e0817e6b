/** The studio's calls to the world storage routes, with the bodies of 409 and 422 answers kept. */
export interface ServerWorld {
  id: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  liveRevision: number | null;
  updatedAt: string;
  publishedAt: string | null;
  world: Record<string, unknown>;
}

export interface Issue {
  path: string;
  message: string;
}

export interface Answer<T> {
  status: number;
  body: T & { error?: { code: string; message: string }; issues?: Issue[]; current?: ServerWorld };
}

export async function send<T>(path: string, method: string, json?: unknown): Promise<Answer<T>> {
  const res = await fetch(path, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({}))) as Answer<T>['body'];
  return { status: res.status, body };
}
