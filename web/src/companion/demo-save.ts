import { type CompanionSave, decodeCompanionSave, EMPTY_COMPANION_SAVE, encodeCompanionSave } from '@yumina/companion';

/**
 * The demo board's adventure save: only the companion chunks 21–23 (offer limits, interaction
 * flags, the tin with its fixed contents), stored through the platform's game save routes. A lost
 * board is never written over the playable save; conversation state and request ids never are.
 */

export const DEMO_GAME = 'companion-demo';
const PATH = `/api/games/${DEMO_GAME}/saves/adventure`;

interface SaveDocument {
  format: 'yumina-save';
  version: number;
  chunks: { id: number; data: string }[];
}

const toBase64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export function saveDocument(save: CompanionSave): SaveDocument {
  const chunks = Object.entries(encodeCompanionSave(save)).map(([id, bytes]) => ({ id: Number(id), data: toBase64(bytes) }));
  return { format: 'yumina-save', version: 1, chunks };
}

export function companionFromDocument(doc: SaveDocument): CompanionSave {
  const chunks: Record<number, Uint8Array> = {};
  for (const c of doc.chunks) if (c.id === 21 || c.id === 22 || c.id === 23) chunks[c.id] = fromBase64(c.data);
  return decodeCompanionSave(chunks);
}

export class DemoSaves {
  revision = 0;
  #queue: Promise<unknown> = Promise.resolve();

  /** The saved companion state, or the empty one (no save yet, or an unreadable one). */
  async load(): Promise<CompanionSave> {
    const res = await fetch(PATH, { credentials: 'same-origin' });
    if (!res.ok) return EMPTY_COMPANION_SAVE;
    const body = (await res.json()) as { revision: number; save: SaveDocument };
    this.revision = body.revision;
    try {
      return companionFromDocument(body.save);
    } catch {
      return EMPTY_COMPANION_SAVE;
    }
  }

  /** Writes at a checkpoint; one write at a time; a stale revision re-reads once and retries. */
  write(save: CompanionSave): Promise<unknown> {
    this.#queue = this.#queue.then(async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await fetch(PATH, {
          method: 'PUT',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ revision: this.revision, save: saveDocument(save), defeated: false }),
        });
        if (res.ok) {
          this.revision = ((await res.json()) as { revision: number }).revision;
          return;
        }
        if (res.status !== 409) return;
        const current = await fetch(PATH, { credentials: 'same-origin' });
        this.revision = current.ok ? ((await current.json()) as { revision: number }).revision : 0;
      }
    }, () => {});
    return this.#queue;
  }
}
