import { useEffect, useState } from 'react';
import { send } from './server.ts';

interface CardReport {
  kept: string[];
  unwritten: string[];
}

/**
 * The studio's Export card button (issue 49 point 9): before the download, in plain words, what the
 * card will hold and what a SillyTavern card cannot (GET /api/worlds/:id/card-report), then the
 * card as a PNG picture or as JSON. The saved version is exported.
 */
export function CardExportDialog({ worldId, dirty }: { worldId: string; dirty: boolean }) {
  const [open, setOpen] = useState(false);
  const [report, setReport] = useState<CardReport | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    let live = true;
    setReport(null);
    setError(null);
    send<CardReport>(`/api/worlds/${encodeURIComponent(worldId)}/card-report`, 'GET').then(
      (answer) => {
        if (!live) return;
        if (answer.status === 200) setReport(answer.body);
        else setError(answer.body.error?.message ?? `The card could not be prepared (${answer.status}).`);
      },
      () => live && setError('The card could not be prepared (network).'),
    );
    return () => {
      live = false;
    };
  }, [open, worldId]);

  if (!open) {
    return (
      <button type="button" className="secondary" onClick={() => setOpen(true)} title="A SillyTavern character card that imports back here as this world">
        Export card…
      </button>
    );
  }
  const base = `/api/worlds/${encodeURIComponent(worldId)}`;
  return (
    <section className="card card-export" role="dialog" aria-label="Export as a character card" style={{ flexBasis: '100%' }}>
      <h3>Export as a SillyTavern character card</h3>
      {dirty && <p className="hint">This exports the saved version: save first to include your latest changes.</p>}
      {error && <p role="status">{error}</p>}
      {!report && !error && <p className="hint">Preparing…</p>}
      {report && (
        <div data-testid="card-report">
          <h4>What the card holds</h4>
          <ul className="list">
            {report.kept.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <h4>What a SillyTavern card cannot hold</h4>
          {report.unwritten.length === 0 ? (
            <p>Nothing: SillyTavern can use all of this world.</p>
          ) : (
            <>
              <ul className="list" data-testid="card-unwritten">
                {report.unwritten.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
              <p className="hint">SillyTavern ignores these; they stay in the card for the way back here.</p>
            </>
          )}
        </div>
      )}
      <div className="row">
        <a className="button" href={`${base}/card.png`} download>
          Download card (PNG)
        </a>
        <a className="button secondary" href={`${base}/card.json`} download>
          Download card (JSON)
        </a>
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          Close
        </button>
      </div>
    </section>
  );
}
