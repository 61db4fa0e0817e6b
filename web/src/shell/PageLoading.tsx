/**
 * What a page shows while its code or its first read is on the way: a status line that a screen
 * reader announces, in a box tall enough that the page's content replaces it without pushing the
 * footer into view and back (no layout shift).
 */
export function PageLoading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="page-loading" role="status" aria-live="polite" data-testid="page-loading">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}
