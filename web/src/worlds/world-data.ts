/** A world page's reads: the world (the author's working copy for its author) and its library card (author, players, tags). */
export const worldUrl = (id: string) => `/api/worlds/${encodeURIComponent(id)}`;
export const worldCardUrl = (id: string) => `/api/library/${encodeURIComponent(id)}`;
export const worldUrls = (id: string) => [worldUrl(id), worldCardUrl(id)];
