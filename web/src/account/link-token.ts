/**
 * The token of a link from a mail (`/verify-email#token=…`, `/reset-password#token=…`). It rides in
 * the fragment, which browsers never send to a server; once read, it is removed from the address
 * bar and the history entry, so it is not left behind in the browser's history.
 */
export function takeLinkToken(): string | null {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (token) window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  return token;
}
