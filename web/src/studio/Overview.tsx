/// <reference types="vite/client" />
import { type ComponentType, lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { Link } from '../lib/router.tsx';
import { type ServerWorld, send } from './server.ts';
import { shortDateTime } from '../lib/dates.ts';
import { ReviewWait } from './ReviewWait.tsx';
import { ExpectedCost } from './ExpectedCost.tsx';

/** The group world's characters (docs/GROUPS.md) load with the section. */
const GroupWorldCharacters = lazy(() => import('../groups/GroupWorldCharacters.tsx').then((m) => ({ default: m.GroupWorldCharacters })));

interface Review {
  id: string;
  kind: 'publication' | 'edit';
  state: 'pending' | 'approved' | 'rejected' | 'withdrawn';
  revision: number;
  reason: string | null;
  decidedAt: string | null;
}

interface ReviewInfo {
  review: Review | null;
  pending: boolean;
  /** With a pending review: whether this installation has any administrator, and whether the reader is one. */
  administratorExists?: boolean;
  youReview?: boolean;
  events: { action: string; actorName: string | null; revision: number | null; reason: string | null; at: string }[];
}

// The Update records issue mounts its history and forms here when its component exists.
const updateModules = import.meta.glob('../updates/UpdateHistory.tsx', { eager: true }) as Record<string, { UpdateHistory?: ComponentType<Record<string, unknown>> }>;
const UpdateHistory = Object.values(updateModules)[0]?.UpdateHistory;

interface VariantGroup {
  /** The original this work is a variant of; null when it is the original or stands alone. */
  originalId: string | null;
  variants: { id: string; name: string; language: string | null; status: ServerWorld['status']; isOriginal: boolean }[];
}

interface WorldCard {
  id: string;
  name: string;
  language: string | null;
}

const STATUS_LABEL: Record<ServerWorld['status'], string> = {
  saved: 'Saved, never published',
  unpublished: 'Unpublished',
  published: 'Published',
  held: 'Held for review',
};

/** The overview of a work: status, review, language variants, publish/unpublish, update history. */
export function Overview({ server, dirty, onServer }: { server: ServerWorld | null; dirty: boolean; onServer(next: ServerWorld): void }) {
  const [info, setInfo] = useState<ReviewInfo | null>(null);
  const [group, setGroup] = useState<VariantGroup | null>(null);
  const [mine, setMine] = useState<WorldCard[]>([]);
  const [target, setTarget] = useState('');
  const [variantError, setVariantError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = server?.id;
  // The studio is the author's; a reader who opens it (GET says canEdit: false) gets no link form.
  const owner = (server as (ServerWorld & { canEdit?: boolean }) | null)?.canEdit !== false;

  const loadReview = useCallback(async () => {
    if (!id) return;
    const res = await send<ReviewInfo>(`/api/worlds/${encodeURIComponent(id)}/review`, 'GET');
    if (res.status === 200) setInfo(res.body);
  }, [id]);
  // Note: the review is reloaded when publication status or revision changes
  useEffect(() => {
    void loadReview();
  }, [loadReview, server?.status, server?.revision]);
  // The language variants come from the work's group (world_variants), not from names.
  useEffect(() => {
    if (!id) return;
    setGroup(null);
    setVariantError(null);
    void send<VariantGroup>(`/api/worlds/${encodeURIComponent(id)}/variants`, 'GET').then((res) => {
      if (res.status === 200) setGroup({ originalId: res.body.originalId, variants: res.body.variants });
      else setVariantError(res.body.error?.message ?? `Could not load the language variants (${res.status}).`);
    });
  }, [id]);
  useEffect(() => {
    if (!id || !owner) return;
    void send<{ worlds: WorldCard[] }>('/api/worlds', 'GET').then((res) => {
      if (res.status === 200) setMine(res.body.worlds);
    });
  }, [id, owner]);

  if (!server) {
    return (
      <section className="card overview" aria-label="Overview">
        <h3>Overview</h3>
        <p data-testid="world-status">Not saved yet</p>
        <p className="hint" data-testid="save-first">
          Save the world first: publishing, assets and update history need a saved world.
        </p>
        <section id="update-history" />
      </section>
    );
  }

  async function act(action: 'publish' | 'unpublish') {
    setBusy(true);
    setMessage(null);
    const res = await send<ServerWorld & { review?: { held: boolean } }>(`/api/worlds/${encodeURIComponent(server!.id)}/${action}`, 'POST');
    setBusy(false);
    if (res.status !== 200) {
      setMessage(res.body.error?.message ?? `Failed (${res.status}).`);
      return;
    }
    onServer(res.body);
    if (action === 'publish') setMessage(res.body.review?.held ? 'Submitted: held for review by an administrator.' : 'Published.');
    else setMessage('Unpublished.');
  }

  async function allowRooms(allowed: boolean) {
    setBusy(true);
    setMessage(null);
    const res = await send<ServerWorld>(`/api/worlds/${encodeURIComponent(server!.id)}/rooms-allowed`, 'PUT', { allowed });
    setBusy(false);
    if (res.status !== 200) {
      setMessage(res.body.error?.message ?? `Failed (${res.status}).`);
      return;
    }
    onServer({ ...server!, roomsAllowed: res.body.roomsAllowed === true });
    setMessage(allowed ? 'Players may now open rooms on this world.' : 'No new rooms can be opened on this world; rooms already open go on.');
  }

  async function linkTo(originalId: string | null) {
    setBusy(true);
    setVariantError(null);
    const res = await send<VariantGroup>(`/api/worlds/${encodeURIComponent(server!.id)}/variant-of`, 'PUT', { originalId });
    setBusy(false);
    if (res.status !== 200) {
      setVariantError(res.body.error?.message ?? `Failed (${res.status}).`);
      return;
    }
    setGroup({ originalId: res.body.originalId, variants: res.body.variants });
    setTarget('');
  }

  const inGroup = new Set([server.id, ...(group?.variants.map((v) => v.id) ?? [])]);
  const candidates = mine.filter((w) => !inGroup.has(w.id));
  // An original with variants cannot become a variant itself (one level only).
  const isOriginal = group !== null && group.originalId === null && group.variants.length > 0;
  const linkLabel = group?.originalId ? 'Move to the variants of' : 'Make this a language variant of';
  const review = info?.review;
  const heldEdit = info?.pending && review?.kind === 'edit';
  return (
    <section className="card overview" aria-label="Overview">
      <h3>Overview</h3>
      <p>
        Status: <strong data-testid="world-status">{STATUS_LABEL[server.status]}</strong> · revision {server.revision}
        {server.liveRevision !== null && server.liveRevision !== server.revision && server.status === 'published' && <> · live revision {server.liveRevision}</>}
      </p>
      {owner && <ExpectedCost worldId={server.id} revision={server.revision} />}
      {heldEdit && (
        <p data-testid="held-edit">
          Your edit (revision {review!.revision}) is held for review; revision {server.liveRevision} keeps serving until it is approved.
        </p>
      )}
      {info?.pending && review && (
        <ReviewWait kind={review.kind} administratorExists={info.administratorExists !== false} youReview={info.youReview === true} />
      )}
      {review?.state === 'rejected' && (
        <p className="error" data-testid="review-reason">
          Review rejected: {review.reason}
        </p>
      )}
      {dirty && <p className="hint">You have unsaved changes; publishing uses the saved revision.</p>}
      <div className="row">
        {server.status !== 'published' && server.status !== 'held' && (
          <button type="button" disabled={busy} onClick={() => act('publish')}>
            Publish
          </button>
        )}
        {server.status === 'published' && server.liveRevision !== server.revision && !heldEdit && (
          <button type="button" disabled={busy} onClick={() => act('publish')}>
            Publish changes
          </button>
        )}
        {(server.status === 'published' || server.status === 'held') && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => {
              const question = server.status === 'held' ? 'Withdraw this work from review?' : 'Unpublish this work? Players can no longer find or start it.';
              if (window.confirm(question)) void act('unpublish');
            }}
          >
            {server.status === 'held' ? 'Withdraw from review' : 'Unpublish'}
          </button>
        )}
        <a className="button secondary" href={`/play/${encodeURIComponent(server.id)}`} target="_blank" rel="noreferrer">
          Try it
        </a>
      </div>
      {owner && (
        <label className="rooms-switch" data-testid="rooms-allowed">
          <input type="checkbox" role="switch" checked={server.roomsAllowed === true} disabled={busy} onChange={(e) => void allowRooms(e.target.checked)} />
          <span>
            Allow rooms <span className="hint">— players can open a room with "Play together" and play this world with friends; applies at once, without review</span>
          </span>
        </label>
      )}
      {message && <p role="status">{message}</p>}
      {owner && (
        <Suspense fallback={null}>
          <GroupWorldCharacters worldId={server.id} />
        </Suspense>
      )}
      <div aria-label="Language variants" role="group">
        <strong>Language variants</strong>
        {group === null ? (
          !variantError && <p className="hint">Loading…</p>
        ) : group.variants.length === 0 ? (
          <p className="hint">No other language variant of this work.</p>
        ) : (
          <ul className="list" data-testid="variant-list">
            {group.variants.map((v) => (
              <li key={v.id} data-variant-id={v.id}>
                <Link to={`/studio/${v.id}`}>{v.name}</Link> ({v.language ?? 'no language'}) · {STATUS_LABEL[v.status]}
                {v.isOriginal && <strong> · original</strong>}
              </li>
            ))}
          </ul>
        )}
        {group && owner && group.originalId !== null && (
          <div className="row">
            <span className="hint">This work is a language variant of the original above.</span>
            <button type="button" className="secondary" disabled={busy} onClick={() => linkTo(null)}>
              Unlink
            </button>
          </div>
        )}
        {group && owner && isOriginal && <p className="hint">This is the original of its language variants; to make it a variant of another work, unlink its variants first.</p>}
        {group && owner && !isOriginal && candidates.length > 0 && (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              if (target) void linkTo(target);
            }}
          >
            <label>
              {linkLabel}{' '}
              <select aria-label={linkLabel} value={target} onChange={(e) => setTarget(e.target.value)}>
                <option value="">Choose one of your works…</option>
                {candidates.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.language ?? 'no language'})
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" disabled={busy || !target}>
              Link
            </button>
          </form>
        )}
        {variantError && <p role="alert">{variantError}</p>}
      </div>
      {info && info.events.length > 0 && (
        <details>
          <summary>Publication history</summary>
          <ul className="list" data-testid="publication-events">
            {info.events.map((e) => (
              <li key={`${e.at}-${e.action}-${e.revision}`}>
                {shortDateTime(e.at)} · {e.action} · revision {e.revision ?? '—'} · {e.actorName ?? 'someone'}
                {e.reason ? ` · ${e.reason}` : ''}
              </li>
            ))}
          </ul>
        </details>
      )}
      <section id="update-history">{UpdateHistory && <UpdateHistory worldId={server.id} status={server.status} reviewPending={info?.pending ?? false} canEdit />}</section>
    </section>
  );
}
