/** The library's page size: four rows of three cards on a wide screen. */
export const LIBRARY_PAGE_SIZE = 12;
export const LIBRARY_TAGS_URL = '/api/library/tags';

/** The sort the library applies: the one in the address, else relevance for a search and newest otherwise. */
export const librarySort = (search: URLSearchParams): string => search.get('sort') ?? (search.get('q') ? 'relevance' : 'new');

/** GET /api/library for the filters in the address (search, tag, sort), from `cursor` on. */
export function libraryPageUrl(search: URLSearchParams, cursor: string | null = null): string {
  const p = new URLSearchParams({ pageSize: String(LIBRARY_PAGE_SIZE), sort: librarySort(search) });
  const q = search.get('q');
  const tag = search.get('tag');
  if (q) p.set('q', q);
  if (tag) p.set('tag', tag);
  if (cursor) p.set('cursor', cursor);
  return `/api/library?${p}`;
}
