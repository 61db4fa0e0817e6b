import { useEffect, useMemo, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { TagList } from '../library/world-card.tsx';
import { lineDiff, withContext } from './line-diff.ts';
import { excerpt } from '../lib/text.ts';

interface Detail {
  review: { id: string; worldId: string; name: string; revision: number; kind: string; ownerName: string };
  world: { name?: string; description?: string; customTags?: string[]; entries?: { id: string; name: string; content: string }[]; variables?: { id: string; name: string }[]; rules?: { id: string; name: string }[] };
  approved: { revision: number | null; world: unknown } | null;
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** One held work for an administrator: a read-only view of the submitted world and its diff against the last approved version. */
export function ReviewDetail({ reviewId }: { reviewId: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<Detail>(`/api/admin/reviews/${encodeURIComponent(reviewId)}`).then(setDetail, (e: Error) => setError(e.message));
  }, [reviewId]);
  const diff = useMemo(() => (detail ? withContext(lineDiff(detail.approved ? pretty(detail.approved.world) : '', pretty(detail.world))) : []), [detail]);
  if (error) return <p role="alert">{error}</p>;
  if (!detail) return <p>Loading…</p>;
  const w = detail.world;
  const added = diff.filter((l) => l.op === 'add').length;
  const removed = diff.filter((l) => l.op === 'del').length;
  return (
    <div className="review-detail" data-testid="review-detail">
      <h4>{w.name}</h4>
      <p className="hint">
        Submitted by {detail.review.ownerName}, revision {detail.review.revision} ·{' '}
        <Link to={`/worlds/${encodeURIComponent(detail.review.worldId)}?inspect=1`}>World page</Link>
      </p>
      {w.description && <p>{w.description}</p>}
      <TagList tags={[...new Set((w.customTags ?? []).map((t) => t.toLowerCase()))]} link={false} />
      <details>
        <summary>
          {w.entries?.length ?? 0} entries, {w.variables?.length ?? 0} variables, {w.rules?.length ?? 0} rules
        </summary>
        <ul className="list">
          {(w.entries ?? []).map((e) => (
            <li key={e.id}>
              <strong>{e.name || e.id}</strong>: <span className="hint">{excerpt(e.content, 300)}</span>
            </li>
          ))}
        </ul>
      </details>
      <h5 data-testid="diff-summary">
        {detail.approved ? `Changes since the approved revision ${detail.approved.revision}` : 'First publication: everything is new'}: +{added} −{removed} lines
      </h5>
      <pre className="diff-lines" data-testid="review-diff" aria-label="Changes against the last approved version" tabIndex={0}>
        {diff.map((l, i) => (
          <span key={i} className={l.op === 'add' ? 'add' : l.op === 'del' ? 'del' : undefined}>
            {l.op === 'add' ? '+ ' : l.op === 'del' ? '- ' : '  '}
            {l.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </div>
  );
}
