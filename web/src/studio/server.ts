/** The studio's calls to the world storage routes, with the bodies of 409 and 422 answers kept. */
export interface ServerWorld {
  id: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  liveRevision: number | null;
  updatedAt: string;
  publishedAt: string | null;
  coverUrl?: string | null;
  /** The character's portrait (POST /api/worlds/:id/portrait, or a card's picture). */
  avatarUrl?: string | null;
  /** Whether players may open rooms on the world to play it together (PUT /api/worlds/:id/rooms-allowed). */
  roomsAllowed?: boolean;
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

/** One of a world's assets as the asset routes answer it. */
export interface WorldAsset {
  id: string;
  ref: string;
  url: string;
  kind: 'image' | 'audio' | 'font';
  contentType: string;
  size: number;
  name: string;
}

/** Uploads a file as one of the world's assets (its type is checked by content on the server). */
export async function uploadAsset(worldId: string, file: File, name = file.name): Promise<{ asset: WorldAsset } | { error: string }> {
  const res = await fetch(`/api/worlds/${encodeURIComponent(worldId)}/assets?name=${encodeURIComponent(name.slice(0, 200))}`, {
    method: 'POST',
    body: file,
    headers: { 'content-type': 'application/octet-stream' },
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({}))) as { asset?: WorldAsset; error?: { message: string } };
  if (!res.ok || !body.asset) return { error: body.error?.message ?? `Upload failed (${res.status}).` };
  return { asset: body.asset };
}

/** The biggest portrait the server takes (the asset store's per-file limit). */
export const PORTRAIT_BYTES = 8 * 1024 * 1024;

/**
 * Uploads the character's portrait: the server makes the avatar (and the cover, when the world has
 * none) with the card importer's resizing; the answer is the world's owner view.
 */
export async function uploadPortrait(worldId: string, file: File): Promise<{ world: ServerWorld } | { error: string }> {
  if (file.size > PORTRAIT_BYTES) return { error: `A portrait may be at most 8 MB; this file is ${(file.size / 1024 / 1024).toFixed(1)} MB.` };
  const res = await fetch(`/api/worlds/${encodeURIComponent(worldId)}/portrait`, {
    method: 'POST',
    body: file,
    headers: { 'content-type': 'application/octet-stream' },
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({}))) as ServerWorld & { error?: { message: string } };
  if (!res.ok) return { error: body.error?.message ?? `Upload failed (${res.status}).` };
  return { world: body };
}
