import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';

interface DataExport {
  id: string;
  status: 'queued' | 'running' | 'ready' | 'failed';
  createdAt: string;
  expiresAt: string | null;
  sizeBytes: number | null;
  error: string | null;
  download: string | null;
}

const size = (n: number) => (n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });

/** Settings → Your data: "Download my data", prepared in the background (the list refreshes while one is being prepared). */
export function ExportSection() {
  const [exports, setExports] = useState<DataExport[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const reload = useCallback(() => api<{ exports: DataExport[] }>('/api/account/exports').then((r) => setExports(r.exports), (e: Error) => setMessage(e.message)), []);
  useEffect(() => {
    void reload();
  }, [reload]);
  const preparing = exports?.some((e) => e.status === 'queued' || e.status === 'running') ?? false;
  useEffect(() => {
    if (!preparing) return;
    const timer = setInterval(() => void reload(), 2000);
    return () => clearInterval(timer);
  }, [preparing, reload]);

  async function ask() {
    setMessage(null);
    try {
      const r = await api<{ exports: DataExport[] }>('/api/account/exports', { json: {} });
      setExports(r.exports);
    } catch (err) {
      setMessage((err as Error).message);
    }
  }

  return (
    <section className="card" id="data" aria-labelledby="data-title">
      <h3 id="data-title">Your data</h3>
      <p className="hint">
        One JSON file with your worlds, your stories with every message, your personas and your settings (never your passwords or API keys). Large accounts take a few minutes, and we
        mail you when theirs is ready. Each file is kept for 7 days.
      </p>
      <div className="row">
        <button type="button" onClick={ask} disabled={preparing}>
          {preparing ? 'Preparing your data…' : 'Download my data'}
        </button>
      </div>
      {message && <p role="alert">{message}</p>}
      {exports && exports.length > 0 && (
        <ul className="list" data-testid="exports" aria-live="polite">
          {exports.map((e) => (
            <li key={e.id}>
              Asked {day(e.createdAt)}:{' '}
              {e.status === 'ready' && e.download ? (
                <>
                  <a href={e.download} download>
                    Download ({size(e.sizeBytes ?? 0)})
                  </a>{' '}
                  <span className="hint">kept until {day(e.expiresAt!)}</span>
                </>
              ) : e.status === 'failed' ? (
                <span className="error">{e.error}</span>
              ) : (
                <span className="hint">being prepared…</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
