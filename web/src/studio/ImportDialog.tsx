import { type CardConflict, foldChanges, type ImportReport, type ImportResult, importWorld, takeCardText } from '@yumina/world';
import { useEffect, useState } from 'react';
import { navigate } from '../lib/router.tsx';
import { type Answer, type Issue, send } from './server.ts';
import { count } from '../lib/text.ts';

/** What the author chose: a file's bytes (a world, a card as JSON or PNG, a lorebook) or pasted JSON. */
type Source = { kind: 'file'; name: string; bytes: Uint8Array } | { kind: 'text'; text: string };

/** Files up to this size go to the server as they are (a binary body), PNG cards included. */
const FILE_LIMIT = 16 * 1024 * 1024;

/** A preview of the card's picture (the chosen PNG file itself). */
function PicturePreview({ bytes }: { bytes: Uint8Array }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const next = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'image/png' }));
    setUrl(next);
    return () => URL.revokeObjectURL(next);
  }, [bytes]);
  return url ? <img src={url} alt="The card's picture" /> : null;
}

/**
 * A card exported from here and edited elsewhere in a field made of several entries here: the
 * author chooses whose text the world keeps (the world's, until they take the card's).
 */
function ConflictChoices({ conflicts, chosen, onChoose }: { conflicts: readonly CardConflict[]; chosen: ReadonlySet<string>; onChoose: (path: string, card: boolean) => void }) {
  return (
    <div data-testid="import-conflicts">
      <h4>Edited elsewhere: choose the text to keep</h4>
      <ul className="list">
        {conflicts.map((conflict) => (
          <li key={conflict.path}>
            <p>
              <code>{conflict.path}</code> was changed after the card left here; this world makes it of {conflict.entryIds.length} entries.
            </p>
            <fieldset className="conflict-choice">
              <legend className="hint">Keep</legend>
              <label>
                <input type="radio" name={conflict.path} checked={!chosen.has(conflict.path)} onChange={() => onChoose(conflict.path, false)} /> this world's text
              </label>
              <label>
                <input type="radio" name={conflict.path} checked={chosen.has(conflict.path)} onChange={() => onChoose(conflict.path, true)} /> the card's text (into the first entry; the others go)
              </label>
            </fieldset>
            <details>
              <summary>The card's text</summary>
              <pre className="conflict-text">{conflict.card}</pre>
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** What each kind of change means to an author (the report's own kinds are the CLI's words). */
const CHANGE_WORDS: Record<ImportReport['changes'][number]['kind'], string> = {
  renamed: 'Renamed',
  converted: 'Converted',
  defaulted: 'Filled in',
  dropped: 'Left out',
};

const FORMAT_WORDS: Record<ImportReport['format'], string> = {
  world: 'a world file',
  'sillytavern-card': 'a SillyTavern character card',
  'sillytavern-world-info': 'a SillyTavern World Info lorebook',
};

function ReportView({ report, picture }: { report: ImportReport; picture: Uint8Array | null }) {
  // Repeated per-entry lines (the same change at entries[0], entries[1], …) fold into one counted line.
  const changes = foldChanges(report.changes);
  const kept = report.assets.filter((asset) => asset.embedded);
  const links = report.assets.filter((asset) => !asset.embedded);
  return (
    <div data-testid="import-report">
      <p data-testid="import-summary">
        Read as {FORMAT_WORDS[report.format]} <span className="hint">({report.sourceVersion})</span>.{' '}
        {report.changes.length === 0 ? 'Everything in it has a place in the world.' : `${count(report.changes.length, 'thing was', 'things were')} adjusted on the way in:`}
      </p>
      {report.format === 'sillytavern-card' && (
        <p className="hint" data-testid="card-kept">
          The card itself stays with the world: <strong>Export card</strong> writes it back with your edits, and what this platform does not use (the card's version, SillyTavern's lorebook settings, other extensions) comes back as it was.
        </p>
      )}
      {report.warnings.length > 0 && (
        <>
          <h4>Warnings</h4>
          <ul className="list import-warnings">
            {report.warnings.map((warning) => (
              <li key={`${warning.path}\u0000${warning.message}`}>
                <code>{warning.path || '(world)'}</code> {warning.message}
              </li>
            ))}
          </ul>
        </>
      )}
      {changes.length > 0 && (
        <ul className="list import-changes">
          {changes.map((change, index) => (
            <li key={`${index}:${change.path}`} data-kind={change.kind} data-count={change.count}>
              <strong>{CHANGE_WORDS[change.kind]}</strong> <code>{change.path || '(world)'}</code>
              {change.count > 1 && <span className="tag">{change.count}×</span>} {change.message}
            </li>
          ))}
        </ul>
      )}
      {kept.length > 0 && (
        <>
          <h4>Kept with the world</h4>
          <ul className="list">
            {kept.map((asset) => (
              <li key={asset.id} data-kept={asset.id}>
                {asset.embedded === 'picture' ? (
                  <span className="import-picture">
                    {picture && <PicturePreview bytes={picture} />}
                    <span>The card's picture becomes the world's cover and the character's avatar.</span>
                  </span>
                ) : (
                  <>
                    <code>{asset.id}</code> ({asset.reference}) is stored as an asset of the world.
                  </>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {links.length > 0 && (
        <>
          <h4>Assets to upload</h4>
          <ul className="list">
            {links.map((asset) => (
              <li key={asset.id} data-asset={asset.id}>
                <code>{asset.id}</code> ({asset.reference}), named at {asset.paths.join(', ')}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

async function sendFile(source: { name: string; bytes: Uint8Array }): Promise<Answer<{ id: string }>> {
  if (source.bytes.length > FILE_LIMIT) return { status: 413, body: { id: '', error: { code: 'TOO_LARGE', message: `The file is ${(source.bytes.length / 1024 / 1024).toFixed(1)} MiB; at most 16 MiB can be imported.` } } };
  const res = await fetch(`/api/worlds/import?name=${encodeURIComponent(source.name.slice(0, 255))}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: source.bytes as Uint8Array<ArrayBuffer>,
    credentials: 'same-origin',
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Answer<{ id: string }>['body'] };
}

/**
 * The studio's Import button: a world of another version, a SillyTavern card (JSON or PNG) or a
 * World Info lorebook, from a file or pasted JSON. The import runs here first so the author reads
 * the report (every change, assets to upload, or every issue of a refusal) before saving; saving
 * sends the same input to POST /api/worlds/import, which creates the draft and opens it.
 */
export function ImportDialog() {
  const [open, setOpen] = useState(false);
  const [source, setSource] = useState<Source | null>(null);
  const [pasted, setPasted] = useState('');
  const [result, setResult] = useState<ImportResult | null>(null);
  const [serverIssues, setServerIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  /** Conflicts (by path) the author settled for the card's text. */
  const [takeCard, setTakeCard] = useState<ReadonlySet<string>>(new Set());

  const preview = (next: Source) => {
    setSource(next);
    setServerIssues([]);
    setMessage(null);
    setTakeCard(new Set());
    setResult(importWorld(next.kind === 'file' ? next.bytes : next.text, next.kind === 'file' ? { fallbackName: next.name.replace(/\.[^.]+$/, '') } : {}));
  };

  async function save() {
    if (!source || !result?.ok) return;
    setBusy(true);
    setMessage(null);
    try {
      // A file goes as it is (a binary body, up to 16 MiB); pasted JSON as {"world": …}.
      const res =
        source.kind === 'file'
          ? await sendFile(source)
          : await send<{ id: string }>('/api/worlds/import', 'POST', { world: JSON.parse(source.text) as unknown });
      if (res.status === 201) {
        const chosen = (result.report.conflicts ?? []).filter((conflict) => takeCard.has(conflict.path));
        if (chosen.length > 0) {
          // The card's text for the conflicts the author settled that way: one save of the new draft.
          const created = res.body as { id: string; revision?: number; world?: { entries: { id: string; content: string }[] } };
          const world = chosen.reduce((next, conflict) => takeCardText(next, conflict), created.world!);
          const saved = await send(`/api/worlds/${encodeURIComponent(created.id)}`, 'PUT', { world, revision: created.revision });
          if (saved.status !== 200) setMessage(saved.body.error?.message ?? `The world was imported, but the card's text could not be saved (${saved.status}).`);
        }
        setOpen(false);
        navigate(`/studio/${encodeURIComponent(res.body.id)}`);
        return;
      }
      setServerIssues(res.body.issues ?? []);
      setMessage(res.body.error?.message ?? `Import failed (${res.status}).`);
    } catch {
      setMessage('Import failed (network).');
    } finally {
      setBusy(false);
    }
  }

  if (!open) {
    return (
      <button type="button" className="secondary" onClick={() => setOpen(true)}>
        Import…
      </button>
    );
  }
  const issues = serverIssues.length > 0 ? serverIssues : result && !result.ok ? result.issues : [];
  return (
    <section className="card import-dialog" role="dialog" aria-label="Import a world" style={{ flexBasis: '100%' }}>
      <h3>Import a world</h3>
      <p className="hint">A world of version 5.x–25.x, a SillyTavern character card (JSON or PNG) or a SillyTavern World Info file.</p>
      <label className="labelled">
        File
        <input
          type="file"
          accept=".json,.png,application/json,image/png"
          onChange={async (event) => {
            const file = event.target.files?.[0];
            if (file) preview({ kind: 'file', name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) });
          }}
        />
      </label>
      <label className="labelled">
        Or paste JSON
        <textarea aria-label="Pasted JSON" rows={6} value={pasted} onChange={(event) => setPasted(event.target.value)} spellCheck={false} />
      </label>
      <div className="row">
        <button type="button" className="secondary" disabled={pasted.trim() === ''} onClick={() => preview({ kind: 'text', text: pasted })}>
          Read pasted JSON
        </button>
        <button type="button" disabled={busy || !result?.ok} onClick={save}>
          {busy ? 'Importing…' : 'Save as a new world'}
        </button>
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          Close
        </button>
      </div>
      {message && <p role="status">{message}</p>}
      {issues.length > 0 && (
        <div className="issues" data-testid="import-issues">
          <h4>{count(issues.length, 'issue')}: this cannot be imported</h4>
          <ul className="list">
            {issues.map((issue) => (
              <li key={`${issue.path}\u0000${issue.message}`} data-issue-path={issue.path}>
                <code className="issue-path">{issue.path || '(file)'}</code> {issue.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {result?.ok && result.report.conflicts && (
        <ConflictChoices
          conflicts={result.report.conflicts}
          chosen={takeCard}
          onChoose={(path, card) =>
            setTakeCard((before) => {
              const next = new Set(before);
              if (card) next.add(path);
              else next.delete(path);
              return next;
            })
          }
        />
      )}
      {result?.report && <ReportView report={result.report} picture={source?.kind === 'file' ? source.bytes : null} />}
    </section>
  );
}
