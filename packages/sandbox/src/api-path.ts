/**
 * The one way the player builds a platform API path from parts it did not write itself (ids and
 * names a world's interface sends, ids from the server): each part is one path segment,
 * percent-encoded, so `/`, `?`, `#`, `\` and `%` stay inside it. A part that is empty or made of
 * dots only is refused, because the browser resolves `.` and `..` segments (and their encoded
 * forms) before sending, which would leave the route the path was built for.
 */
export class UnsafePathSegmentError extends Error {
  readonly code = 'INVALID_ID';
  constructor(readonly segment: string) {
    super(`${JSON.stringify(segment.slice(0, 80))} cannot be part of a request path (empty or dots only).`);
    this.name = 'UnsafePathSegmentError';
  }
}

/** `/api/<segment>/<segment>…` with every segment encoded; throws UnsafePathSegmentError for an empty or dots-only one. */
export function apiPath(...segments: readonly string[]): string {
  return `/api/${segments
    .map((segment) => {
      if (typeof segment !== 'string' || segment === '' || /^\.+$/.test(segment)) throw new UnsafePathSegmentError(String(segment));
      return encodeURIComponent(segment);
    })
    .join('/')}`;
}
