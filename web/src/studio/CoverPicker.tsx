import { useState } from 'react';
import { Cover } from '../library/world-card.tsx';
import { type ServerWorld, send, uploadAsset } from './server.ts';
import { onFilePicked } from '../lib/api.ts';

/**
 * The cover of a saved world: an uploaded image (PNG, JPEG, GIF or WebP, checked by its content on
 * the server) stored as one of the world's assets and set as its cover; or removed.
 */
export function CoverPicker({ server, name, onServer }: { server: ServerWorld | null; name: string; onServer(next: ServerWorld): void }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!server) return <p className="hint">Save the world first; then you can give it a cover image.</p>;
  const id = encodeURIComponent(server.id);

  async function upload(file: File) {
    setBusy(true);
    setMessage(null);
    try {
      const uploaded = await uploadAsset(server!.id, file, `cover-${file.name}`);
      if ('error' in uploaded) return setMessage(uploaded.error);
      const set = await send<ServerWorld>(`/api/worlds/${id}/cover`, 'PUT', { assetId: uploaded.asset.id });
      if (set.status !== 200) return setMessage(set.body.error?.message ?? `Could not set the cover (${set.status}).`);
      onServer(set.body);
      setMessage('Cover set.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="cover-picker" data-testid="cover-picker">
      <h4>Cover</h4>
      <div className="row">
        <div style={{ width: 240 }}>
          <Cover url={server.coverUrl ?? null} name={name} seed={server.id} />
        </div>
        <div className="fields">
          <label>
            Upload a cover image
            <input
              type="file"
              accept="image/png,image/jpeg,image/gif,image/webp"
              disabled={busy}
              onChange={onFilePicked((file) => void upload(file))}
            />
          </label>
          {server.coverUrl && (
            <button
              type="button"
              className="link"
              onClick={async () => {
                if (!window.confirm('Remove the cover image?')) return;
                const res = await send<ServerWorld>(`/api/worlds/${id}/cover`, 'PUT', { assetId: null });
                if (res.status === 200) onServer(res.body);
              }}
            >
              Remove cover
            </button>
          )}
          <p className="hint" aria-live="polite" data-testid="cover-message">
            {message}
          </p>
        </div>
      </div>
    </div>
  );
}
