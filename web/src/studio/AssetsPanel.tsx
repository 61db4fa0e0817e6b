import { useCallback, useEffect, useState } from 'react';

interface Asset {
  id: string;
  ref: string;
  url: string;
  kind: 'image' | 'audio' | 'font';
  contentType: string;
  size: number;
  name: string;
}

/** Upload and list a world's images, audio and fonts; each has an `asset://<id>` reference to paste. */
export function AssetsPanel({ worldId }: { worldId: string }) {
  const [assets, setAssets] = useState<Asset[]>([]);
  const [used, setUsed] = useState(0);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    const res = await fetch(`/api/worlds/${encodeURIComponent(worldId)}/assets`, { credentials: 'same-origin' });
    if (!res.ok) return;
    const body = (await res.json()) as { assets: Asset[]; usedBytes: number };
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
      const res = await fetch(`/api/worlds/${encodeURIComponent(worldId)}/assets?name=${encodeURIComponent(file.name.slice(0, 200))}`, {
        method: 'POST',
        body: file,
        headers: { 'content-type': 'application/octet-stream' },
        credentials: 'same-origin',
      });
      const body = (await res.json().catch(() => ({}))) as { asset?: Asset; error?: { message: string } };
      if (!res.ok) setMessage(body.error?.message ?? `Upload failed (${res.status}).`);
      else {
        setMessage(`Uploaded ${file.name}: ${body.asset!.ref}`);
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
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void upload(file);
          }}
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
