import { useCallback, useEffect, useState } from 'react';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { send } from '../studio/server.ts';
import { ReviewDetail } from './ReviewDetail.tsx';
import '../studio/studio.css';
import { useTitle } from '../lib/title.ts';
import { shortDateTime } from '../lib/dates.ts';

interface Review {
  id: string;
  worldId: string;
  ownerId: string;
  ownerName: string;
  kind: 'publication' | 'edit';
  revision: number;
  name: string;
  state: string;
  submittedAt: string;
  decidedAt: string | null;
  reason: string | null;
}

interface Rule {
  holdFirstPublication: boolean;
  holdAllPublications: boolean;
}

/** `/admin/reviews`: held works and held edits, approve or reject with a reason; the review rule. */
export function ReviewsPage() {
  useTitle(['Reviews']);
  const { loading, info } = useSession();
  const [state, setState] = useState<'pending' | 'all'>('pending');
  const [reviews, setReviews] = useState<Review[] | null>(null);
  const [rule, setRule] = useState<Rule | null>(null);
  const [flagged, setFlagged] = useState<{ accountId: string; displayName: string; reason: string }[]>([]);
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [flagAccount, setFlagAccount] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [flagReason, setFlagReason] = useState('');

  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent('/admin/reviews')}`);
  }, [loading, info]);

  const load = useCallback(async () => {
    const [list, settings] = await Promise.all([
      send<{ reviews: Review[] }>(`/api/admin/reviews?state=${state}`, 'GET'),
      send<{ rule: Rule; flaggedAccounts: { accountId: string; displayName: string; reason: string }[] }>('/api/admin/review-rule', 'GET'),
    ]);
    if (list.status !== 200) {
      setMessage(list.body.error?.message ?? `Could not load reviews (${list.status}).`);
      return;
    }
    setReviews(list.body.reviews);
    if (settings.status === 200) {
      setRule(settings.body.rule);
      setFlagged(settings.body.flaggedAccounts);
    }
  }, [state]);
  useEffect(() => {
    if (info?.account?.isAdmin) void load();
  }, [info, load]);

  if (loading || !info?.account) return <p>Loading…</p>;
  if (!info.account.isAdmin) return <p role="alert">Only administrators can see this page.</p>;

  async function decide(review: Review, decision: 'approve' | 'reject') {
    const reason = (reasons[review.id] ?? '').trim();
    if (decision === 'reject' && !reason) {
      setMessage('Give the author a reason for the rejection.');
      return;
    }
    const res = await send(`/api/admin/reviews/${review.id}/${decision}`, 'POST', reason ? { reason } : {});
    setMessage(res.status === 200 ? `${decision === 'approve' ? 'Approved' : 'Rejected'} “${review.name}”.` : (res.body.error?.message ?? `Failed (${res.status}).`));
    await load();
  }

  async function saveRule(next: Rule) {
    const res = await send<{ rule: Rule }>('/api/admin/review-rule', 'PUT', next);
    if (res.status === 200) setRule(res.body.rule);
  }

  return (
    <div className="admin">
      <h1>Reviews</h1>
      {message && <p role="status">{message}</p>}
      <section className="card">
        <div className="row">
          <label className="inline">
            <input type="radio" name="state" checked={state === 'pending'} onChange={() => setState('pending')} /> Held (waiting)
          </label>
          <label className="inline">
            <input type="radio" name="state" checked={state === 'all'} onChange={() => setState('all')} /> All decisions
          </label>
        </div>
        {reviews === null ? (
          <p>Loading…</p>
        ) : reviews.length === 0 ? (
          <p className="hint">Nothing is waiting for review.</p>
        ) : (
          <table aria-label="Reviews">
            <thead>
              <tr>
                <th scope="col">Work</th>
                <th scope="col">Author</th>
                <th scope="col">Kind</th>
                <th scope="col">Submitted</th>
                <th scope="col">Decision</th>
              </tr>
            </thead>
            <tbody>
              {reviews.map((r) => [
                <tr key={r.id} data-review-id={r.id} data-world-id={r.worldId}>
                  <td>
                    {r.name} <span className="hint">rev {r.revision}</span>{' '}
                    <button type="button" className="link" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? null : r.id)}>
                      {open === r.id ? 'Hide' : 'View world and changes'}
                    </button>
                  </td>
                  <td>{r.ownerName}</td>
                  <td>{r.kind === 'edit' ? 'Edit of a published work' : 'Publication'}</td>
                  <td>{shortDateTime(r.submittedAt)}</td>
                  <td>
                    {r.state === 'pending' ? (
                      <div className="fields">
                        <input
                          aria-label={`Reason for ${r.name}`}
                          placeholder="Reason (required to reject)"
                          value={reasons[r.id] ?? ''}
                          onChange={(e) => setReasons({ ...reasons, [r.id]: e.target.value })}
                        />
                        <div className="row">
                          <button type="button" onClick={() => decide(r, 'approve')}>
                            Approve
                          </button>
                          <button type="button" className="secondary" onClick={() => decide(r, 'reject')}>
                            Reject
                          </button>
                        </div>
                      </div>
                    ) : (
                      <span>
                        {r.state}
                        {r.reason ? `: ${r.reason}` : ''}
                      </span>
                    )}
                  </td>
                </tr>,
                open === r.id ? (
                  <tr key={`${r.id}-detail`}>
                    <td colSpan={5}>
                      <ReviewDetail reviewId={r.id} />
                    </td>
                  </tr>
                ) : null,
              ])}
            </tbody>
          </table>
        )}
      </section>
      {rule && (
        <section className="card" aria-label="Review rule">
          <h3>Review rule</h3>
          <label className="inline">
            <input type="checkbox" checked={rule.holdFirstPublication} onChange={(e) => saveRule({ ...rule, holdFirstPublication: e.target.checked })} />
            Hold an account's first publication
          </label>
          <label className="inline">
            <input type="checkbox" checked={rule.holdAllPublications} onChange={(e) => saveRule({ ...rule, holdAllPublications: e.target.checked })} />
            Hold every publication and edit
          </label>
          <h4>Accounts whose publications are held</h4>
          <ul className="list">
            {flagged.map((f) => (
              <li key={f.accountId}>
                {f.displayName} {f.reason && `· ${f.reason}`}{' '}
                <button
                  type="button"
                  className="link"
                  onClick={async () => {
                    await send(`/api/admin/accounts/${encodeURIComponent(f.accountId)}/review-flag`, 'PUT', { hold: false, reason: '' });
                    await load();
                  }}
                >
                  Remove flag
                </button>
              </li>
            ))}
          </ul>
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              const res = await send<{ accountId: string; email: string; displayName: string }>('/api/admin/review-flag', 'PUT', {
                account: flagAccount.trim(),
                hold: true,
                reason: flagReason,
              });
              // Says which account was flagged: the name typed could have meant another one.
              setMessage(
                res.status === 200
                  ? `Publications of ${res.body.displayName} <${res.body.email}> (${res.body.accountId}) are now held.`
                  : (res.body.error?.message ?? `Failed (${res.status}).`),
              );
              setFlagAccount('');
              setFlagReason('');
              await load();
            }}
          >
            <label>
              Account (e-mail, account id or name)
              <input value={flagAccount} onChange={(e) => setFlagAccount(e.target.value)} required />
            </label>
            <label>
              Reason
              <input value={flagReason} onChange={(e) => setFlagReason(e.target.value)} />
            </label>
            <button type="submit">Hold this account's publications</button>
          </form>
        </section>
      )}
    </div>
  );
}
