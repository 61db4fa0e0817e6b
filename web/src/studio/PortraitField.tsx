import { useState } from 'react';
import { type ServerWorld, send, uploadPortrait } from './server.ts';
import { onFilePicked } from '../lib/api.ts';

const ACCEPT = 'image/png,image/jpeg,image/gif,image/webp,image/avif';

/**
 * The character's portrait: the picture (or an empty frame), a file button and Remove. What a
 * chosen file does is the caller's: the studio uploads it at once, the character editor with its
 * next save.
 */
export function PortraitField({ src, name, busy = false, onFile, onRemove }: { src: string | null; name: string; busy?: boolean; onFile(file: File): void; onRemove?: () => void }) {
  return (
    <div className="portrait-field" data-testid="portrait-field">
      {src ? (
        <img className="portrait" src={src} alt={`Portrait of ${name || 'the character'}`} data-testid="portrait" />
      ) : (
        <div className="portrait portrait-empty" role="img" aria-label="No portrait yet">
          <span aria-hidden="true">{(name.trim()[0] ?? '?').toUpperCase()}</span>
        </div>
      )}
      <div className="portrait-controls">
        <div className="row">
          <label className="button secondary file-button">
            {src ? 'Change the portrait' : 'Upload a portrait'}
            <input
              type="file"
              accept={ACCEPT}
              className="visually-hidden"
              disabled={busy}
              onChange={onFilePicked(onFile)}
            />
          </label>
          {src && onRemove && (
            <button type="button" className="link" disabled={busy} onClick={onRemove}>
              Remove
            </button>
          )}
        </div>
        <p className="hint">PNG, JPEG, GIF, WebP or AVIF, up to 8 MB. Shown on the character&apos;s chat bubbles (and as the library cover while there is none).</p>
      </div>
    </div>
  );
}

/** The studio's portrait of a saved world (Cover and tags): an upload or a removal takes effect at once. */
export function PortraitPicker({ server, name, onServer }: { server: ServerWorld | null; name: string; onServer(next: ServerWorld): void }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!server) return <p className="hint">Save the world first; then you can give its character a portrait.</p>;
  const id = server.id;
  return (
    <div className="portrait-picker" data-testid="portrait-picker">
      <h4>Character portrait</h4>
      <PortraitField
        src={server.avatarUrl ?? null}
        name={name}
        busy={busy}
        onFile={async (file) => {
          setBusy(true);
          setMessage(null);
          const answer = await uploadPortrait(id, file);
          setBusy(false);
          if ('error' in answer) return setMessage(answer.error);
          onServer(answer.world);
          setMessage('Portrait set.');
        }}
        onRemove={async () => {
          if (!window.confirm('Remove the portrait?')) return;
          const res = await send<ServerWorld>(`/api/worlds/${encodeURIComponent(id)}/portrait`, 'DELETE');
          if (res.status === 200) onServer(res.body);
          else setMessage(res.body.error?.message ?? `Could not remove the portrait (${res.status}).`);
        }}
      />
      <p className="hint" aria-live="polite" data-testid="portrait-message">
        {message}
      </p>
    </div>
  );
}
