import { useCallback, useEffect, useState } from 'react';
import { uploadAsset, type WorldAsset } from './server.ts';
import { onFilePicked } from '../lib/api.ts';

/** Upload and list a world's images, audio and fonts; each has an `asset://<id>` reference to paste. */
export function AssetsPanel({ worldId }: { worldId: string }) {
  const [assets, setAssets] = useState<WorldAsset[]>([]);
  const [used, setUsed] = useState(0);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    const res = await fetch(`/api/worlds/${encodeURIComponent(worldId)}/assets`, { credentials: 'same-origin' });
    if (!res.ok) return;
    const body = (await res.json()) as { assets: WorldAsset[]; usedBytes: number };
    setAssets(body.assets);
    setUsed(body.usedBytes);
  }, [worldId]);
  useEffect(() => {
    void load();
  }, [load]);

  async function upload(file: File) {
    setBusy(true);
    setMessage(null);
    try {
      const uploaded = await uploadAsset(worldId, file);
      if ('error' in uploaded) setMessage(uploaded.error);
      else {
        setMessage(`Uploaded ${file.name}: ${uploaded.asset.ref}`);
        await load();
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-label="Assets">
      <h3>Assets</h3>
      <p className="hint">Images, audio and fonts for this world. Use the reference (asset://…) in tracks, entries and custom interface code.</p>
      <label>
        Upload a file
        <input
          type="file"
          disabled={busy}
          onChange={onFilePicked((file) => void upload(file))}
        />
      </label>
      {message && <p role="status">{message}</p>}
      <ul className="list">
        {assets.map((a) => (
          <li key={a.id} className="row asset">
            {a.kind === 'image' && <img src={a.url} alt={a.name} height={40} />}
            {a.kind === 'audio' && <audio src={a.url} controls preload="none">
                <track kind="captions" />
              </audio>}
            <span>{a.name || a.id}</span>
            <code>{a.ref}</code>
            <span className="hint">
              {a.contentType} · {Math.ceil(a.size / 1024)} KiB
            </span>
            <button
              type="button"
              className="link"
              onClick={async () => {
                if (!window.confirm(`Delete ${a.name || a.id}? Anything that refers to ${a.ref} stops showing it.`)) return;
                await fetch(`/api/worlds/${encodeURIComponent(worldId)}/assets/${a.id}`, { method: 'DELETE', credentials: 'same-origin' });
                await load();
              }}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
      <p className="hint">In use: {Math.ceil(used / 1024)} KiB</p>
    </section>
  );
}
