/**
 * A turn that failed (issue 30 A2) is not the world's message: its failure is a notice beside the
 * player's message it answered, with Retry (the last turn only) and, when the AI connection is the
 * cause, a link to Settings → AI connection. A failed reply kept by an older version of the
 * platform shows the same way, never as a bubble of the world.
 */
import { Link } from '../lib/router.tsx';

/** Failures the player fixes in Settings → AI connection: no provider, a key the provider refused, an address the platform refuses. */
export const CONNECTION_FAILURES = new Set(['AI_NO_PROVIDER', 'AI_PROVIDER_AUTH', 'AI_URL_REFUSED']);
export const AI_SETTINGS_PATH = '/app/settings#ai-config';

export function TurnFailure({ code, message, onRetry, retryDisabled }: { code: string | null; message: string; onRetry: (() => void) | null; retryDisabled: boolean }) {
  return (
    <div className="turn-failure" role="alert" data-testid="turn-failure" data-code={code ?? undefined}>
      <span>
        <strong>No reply:</strong> {message || 'The reply failed.'}
      </span>
      <span className="row">
        {onRetry && (
          <button type="button" className="secondary" disabled={retryDisabled} onClick={onRetry}>
            Retry
          </button>
        )}
        {code && CONNECTION_FAILURES.has(code) && <Link to={AI_SETTINGS_PATH}>Settings → AI connection</Link>}
      </span>
    </div>
  );
}
