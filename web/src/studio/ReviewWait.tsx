import { Link } from '../lib/router.tsx';

/**
 * What a held work waits for (issue 44, point 2): an administrator's review, and, when this
 * installation has no administrator at all, that nobody can give it yet and how one is made
 * (scripts/admin.ts). An administrator author is sent to the review queue.
 */
export function ReviewWait({ kind, administratorExists, youReview }: { kind: 'publication' | 'edit'; administratorExists: boolean; youReview: boolean }) {
  return (
    <div className="callout" role="note" data-testid="review-wait">
      <p>
        <strong>Waiting for an administrator’s review.</strong>{' '}
        {kind === 'edit' ? 'Your edit goes live once an administrator approves it.' : 'Your world appears in the library once an administrator approves it.'}
      </p>
      {youReview && (
        <p>
          You are an administrator: approve it in the <Link to="/admin/reviews">review queue</Link>.
        </p>
      )}
      {!administratorExists && (
        <p data-testid="no-administrator">
          This installation has no administrator yet, so nobody can review it. Whoever runs the server makes one with{' '}
          <code>npm run admin -- grant &lt;e-mail&gt;</code> (on the embedded database, stop <code>npm start</code> first); the work then waits in
          their review queue.
        </p>
      )}
    </div>
  );
}
