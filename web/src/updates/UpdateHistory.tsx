import { type FormEvent, useCallback, useEffect, useState } from 'react';
import type { History, UpdateRecord } from '@yumina/updates';
import { api } from '../lib/api.ts';
import { labelsFor, type UpdatesLabels, type UpdatesLanguage } from './labels.ts';

/** One record and the history as GET /api/worlds/:id/updates returns them (the server's own types). */
export type UpdateRecordView = UpdateRecord;
export type HistoryView = History;

export interface UpdateHistoryProps {
  /** The level of the section's heading on its page (3 by default; 2 on a world page, right under its h1). Its forms' headings sit one below. */
  level?: 2 | 3;
  /** The work; null (or undefined) for a new draft that was never saved. */
  worldId: string | null | undefined;
  /**
   * The current surface's own edit permission (signed in, not guest mode, not read-only
   * inspection). Editing needs both this and the server's canEdit.
   */
  surfaceCanEdit?: boolean;
  /** Alias of surfaceCanEdit (the studio overview passes `canEdit`). */
  canEdit?: boolean;
  /** A new draft with unsaved changes: show the save-first hint and make no history request. */
  unsavedDraft?: boolean;
  /**
   * The host's view of the work's publication status and pending review, when it has one: a
   * change reloads the history with canCreate and canNotify (the live stream also reports it).
   */
  status?: string;
  reviewPending?: boolean;
  /** Follow the live overview stream (default true). */
  live?: boolean;
  language?: UpdatesLanguage;
}

const byNewest = (a: UpdateRecordView, b: UpdateRecordView) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : a.id < b.id ? 1 : -1);

/**
 * The update history of a work: read-only for readers; for the author an edit dialog per record
 * and a form for standalone records. Used by the world details page and the studio overview.
 */
export function UpdateHistory({ worldId, surfaceCanEdit, canEdit, unsavedDraft = false, status, reviewPending, live = true, language, level = 3 }: UpdateHistoryProps) {
  const t = labelsFor(language);
  const Heading = level === 2 ? 'h2' : 'h3';
  const sub = level === 2 ? 'h3' : 'h4';
  const surface = surfaceCanEdit ?? canEdit ?? false;
  const [view, setView] = useState<HistoryView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<UpdateRecordView | null>(null);
  const [liveState, setLiveState] = useState<'off' | 'connecting' | 'ready'>('off');
  const active = !!worldId && !unsavedDraft;

  const load = useCallback(async () => {
    if (!worldId) return;
    try {
      setView(await api<HistoryView>(`/api/worlds/${encodeURIComponent(worldId)}/updates`));
      setError(null);
    } catch {
      setError(t.loadFailed);
    }
  }, [worldId, t.loadFailed]);

  // Note: the host's status and review flags are reload triggers
  useEffect(() => {
    if (!active) return;
    void load();
  }, [active, load, status, reviewPending]);

  useEffect(() => {
    if (!active || !live || typeof EventSource === 'undefined') return;
    const source = new EventSource(`/api/worlds/${encodeURIComponent(worldId ?? '')}/updates/events`);
    setLiveState('connecting');
    let connectedBefore = false;
    source.addEventListener('ready', () => {
      setLiveState('ready');
      // After a reconnect, records published during the gap are picked up by a reload.
      if (connectedBefore) void load();
      connectedBefore = true;
    });
    source.addEventListener('error', () => setLiveState('connecting'));
    source.addEventListener('record', (e) => {
      const { update } = JSON.parse((e as MessageEvent<string>).data) as { update: UpdateRecordView };
      setView((v) => (v ? { ...v, updates: [update, ...v.updates.filter((u) => u.id !== update.id)].sort(byNewest) } : v));
    });
    // Publication or review status changed: reload canCreate and canNotify (and the history).
    source.addEventListener('status', () => void load());
    source.addEventListener('gone', () => {
      source.close();
      void load();
    });
    return () => {
      source.close();
      setLiveState('off');
    };
  }, [active, live, worldId, load]);

  if (!active) {
    return (
      <section className="card updates" aria-label={t.history}>
        <Heading>{t.history}</Heading>
        <p className="hint" data-testid="updates-save-first">
          {t.saveFirst}
        </p>
      </section>
    );
  }

  const editable = !!view?.canEdit && surface;
  return (
    <section className="card updates" aria-label={t.history} data-live={liveState}>
      <Heading>{t.history}</Heading>
      {error && <p role="alert">{error}</p>}
      {view && view.updates.length === 0 && <p className="hint">{t.empty}</p>}
      <ol className="list" data-testid="update-list">
        {view?.updates.map((u) => (
          <li key={u.id} data-testid="update-record" data-update-id={u.id}>
            <strong>{u.title}</strong> {u.isMajor && <span className="badge">{t.major}</span>}{' '}
            <time dateTime={u.timestamp} className="hint">
              {new Date(u.timestamp).toLocaleString(language)}
            </time>
            {u.content && <p className="update-content">{u.content}</p>}
            {editable && (
              <button type="button" className="secondary" onClick={() => setEditing(u)}>
                {t.edit}
              </button>
            )}
          </li>
        ))}
      </ol>
      {editable && editing && (
        <EditDialog
          key={editing.id}
          record={editing}
          t={t}
          heading={sub}
          onCancel={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            setView((v) => (v ? { ...v, updates: v.updates.map((u) => (u.id === saved.id ? saved : u)) } : v));
          }}
        />
      )}
      {editable && view && (
        <CreateForm
          heading={sub}
          worldId={view.worldId}
          canCreate={view.canCreate}
          canNotify={view.canNotify}
          t={t}
          onCreated={(update) => setView((v) => (v ? { ...v, updates: [update, ...v.updates.filter((x) => x.id !== update.id)].sort(byNewest) } : v))}
          onStale={() => void load()}
        />
      )}
    </section>
  );
}

/** The title and details inputs of a record, shared by the edit dialog and the create form. */
function RecordFields(props: { t: UpdatesLabels; title: string; content: string; rows: number; onTitle(v: string): void; onContent(v: string): void }) {
  return (
    <>
      <label>
        {props.t.title}
        <input value={props.title} onChange={(e) => props.onTitle(e.target.value)} required maxLength={200} />
      </label>
      <label>
        {props.t.details}
        <textarea value={props.content} onChange={(e) => props.onContent(e.target.value)} maxLength={10000} rows={props.rows} />
      </label>
    </>
  );
}

/** Edits title and content. A failed save keeps the draft for a retry; cancel discards it. */
function EditDialog({
  record,
  t,
  heading: Heading,
  onCancel,
  onSaved,
}: {
  record: UpdateRecordView;
  t: UpdatesLabels;
  heading: 'h3' | 'h4';
  onCancel(): void;
  onSaved(record: UpdateRecordView): void;
}) {
  const [title, setTitle] = useState(record.title);
  const [content, setContent] = useState(record.content);
  const [saving, setSaving] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setFailed(null);
    try {
      // Saved with the record's own source work (the history may mix language variants).
      const { update } = await api<{ update: UpdateRecordView }>(
        `/api/worlds/${encodeURIComponent(record.worldId)}/updates/${encodeURIComponent(record.id)}`,
        { method: 'PATCH', json: { title, content } },
      );
      onSaved(update);
    } catch (err) {
      setFailed(`${t.saveFailed} (${(err as Error).message})`);
    } finally {
      setSaving(false);
    }
  }

  return (
    <div role="dialog" aria-modal="true" aria-label={t.editTitle} className="card dialog">
      <form onSubmit={save} aria-label={t.editTitle}>
        <Heading>{t.editTitle}</Heading>
        <RecordFields t={t} title={title} content={content} rows={4} onTitle={setTitle} onContent={setContent} />
        {failed && <p role="alert">{failed}</p>}
        <div className="row">
          <button type="submit" disabled={saving}>
            {saving ? t.saving : t.save}
          </button>
          <button type="button" className="secondary" onClick={onCancel}>
            {t.cancel}
          </button>
        </div>
      </form>
    </div>
  );
}

/**
 * A standalone record. The form always sends an explicit notifyPlayers choice (seed 001): where the
 * server said canNotify (a published work) the author's checkbox (default off); where it said the
 * work cannot notify yet, `false`, as the form says ("Notifications become available once the world
 * is published"). Omitting the choice is left to older clients (the server's notify dialog). After
 * an add on a work shown as unable to notify, the permissions are read again: if it was published
 * meanwhile (another tab, a missed live update), the checkbox is offered from then on. The form is
 * closed during a review.
 */
function CreateForm({
  heading: Heading,
  worldId,
  canCreate,
  canNotify,
  t,
  onCreated,
  onStale,
}: {
  heading: 'h3' | 'h4';
  worldId: string;
  canCreate: boolean;
  canNotify: boolean;
  t: UpdatesLabels;
  onCreated(record: UpdateRecordView): void;
  /** The server's permissions differ from the ones shown: reload them. */
  onStale(): void;
}) {
  const [title, setTitle] = useState('');
  const [content, setContent] = useState('');
  const [isMajor, setIsMajor] = useState(false);
  const [notify, setNotify] = useState(false);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  if (!canCreate) return <p className="hint">{t.reviewPending}</p>;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const notifyPlayers = canNotify && notify;
    setBusy(true);
    setMessage(null);
    try {
      const created = await api<{ update: UpdateRecordView; notified: number }>(`/api/worlds/${encodeURIComponent(worldId)}/updates`, {
        method: 'POST',
        json: { title, content, isMajor, notifyPlayers },
      });
      onCreated(created.update);
      setTitle('');
      setContent('');
      setIsMajor(false);
      setNotify(false);
      setMessage({ ok: true, text: t.added(created.notified) });
      // Shown as unable to notify: read the permissions again in case the work was published meanwhile.
      if (!canNotify) onStale();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} aria-label={t.createHeading}>
      <Heading>{t.createHeading}</Heading>
      <RecordFields t={t} title={title} content={content} rows={3} onTitle={setTitle} onContent={setContent} />
      <label className="inline">
        <input type="checkbox" checked={isMajor} onChange={(e) => setIsMajor(e.target.checked)} />
        {t.isMajor}
      </label>
      {canNotify ? (
        <label className="inline">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.target.checked)} />
          {t.notifyPlayers}
        </label>
      ) : (
        <p className="hint">{t.notifyUnavailable}</p>
      )}
      <div className="row">
        <button type="submit" disabled={busy}>
          {t.add}
        </button>
      </div>
      {message && (message.ok ? <p role="status">{message.text}</p> : <p role="alert">{message.text}</p>)}
    </form>
  );
}
