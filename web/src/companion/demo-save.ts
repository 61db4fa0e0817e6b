import { type CompanionSave, decodeCompanionSave, EMPTY_COMPANION_SAVE, encodeCompanionSave, freshAttemptSave } from '@yumina/companion';
import type { Lawn } from './lawn.ts';
import { LAWN_CHUNK, lawnSnapshot, type LawnSnapshot, restoreLawn } from './lawn-save.ts';

/**
 * The demo board's adventure save, through the platform's game save routes: the companion chunks
 * 21–23 (offer limits, interaction flags, the tin with its fixed contents) and the lawn's own
 * progress (chunk 100), always written together, so a reload resumes both at the same moment.
 * When an attempt ends the save becomes a fresh attempt of the level (no lawn, no tin, no used
 * offers); the lost board itself is never written over the playable save. Conversation state and
 * request ids are never saved.
 */

export const DEMO_GAME = 'companion-demo';
const PATH = `/api/games/${DEMO_GAME}/saves/adventure`;
/** Checkpoints are coalesced: at most one write in flight, the newest state waiting, a short gap between. */
const WRITE_GAP_MS = 3_200;

interface SaveDocument {
  format: 'yumina-save';
  version: number;
  chunks: { id: number; data: string }[];
}

export interface DemoSave {
  companion: CompanionSave;
  /** The lawn being played when the save was written; null for a fresh attempt. */
  lawn: Lawn | null;
}

export type SaveStatus = 'idle' | 'saving' | 'saved' | 'failed';
type PutOutcome = 'saved' | 'failed' | { retryAfterMs: number };

const toBase64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export function saveDocument(save: CompanionSave, lawn: LawnSnapshot | null): SaveDocument {
  const chunks = Object.entries(encodeCompanionSave(save)).map(([id, bytes]) => ({ id: Number(id), data: toBase64(bytes) }));
  if (lawn) chunks.push({ id: LAWN_CHUNK, data: toBase64(new TextEncoder().encode(JSON.stringify(lawn))) });
  return { format: 'yumina-save', version: 1, chunks };
}

/**
 * Reads a save. The level's companion state (offers, tin) is resumed only together with the lawn
 * it belongs to; a save without a readable lawn is a fresh attempt (interaction flags kept).
 */
export function fromDocument(doc: SaveDocument): DemoSave {
  const chunks: Record<number, Uint8Array> = {};
  for (const c of doc.chunks) if (c.id === 21 || c.id === 22 || c.id === 23) chunks[c.id] = fromBase64(c.data);
  const companion = decodeCompanionSave(chunks);
  const lawnChunk = doc.chunks.find((c) => c.id === LAWN_CHUNK);
  let lawn: Lawn | null = null;
  if (lawnChunk) {
    try {
      lawn = restoreLawn(JSON.parse(new TextDecoder().decode(fromBase64(lawnChunk.data))));
    } catch {
      lawn = null;
    }
  }
  return lawn ? { companion, lawn } : { companion: freshAttemptSave(companion), lawn: null };
}

export class DemoSaves {
  revision = 0;
  status: SaveStatus = 'idle';
  #pending: SaveDocument | null = null;
  #draining = false;
  #lastWriteAt = 0;
  readonly #onStatus: (status: SaveStatus) => void;

  constructor(onStatus: (status: SaveStatus) => void = () => {}) {
    this.#onStatus = onStatus;
  }

  #set(status: SaveStatus) {
    this.status = status;
    this.#onStatus(status);
  }

  /** The saved state, or a fresh attempt (no save yet, or an unreadable one). */
  async load(): Promise<DemoSave> {
    // no save yet: `null` (not a 404, which the browser's console would log on every first open)
    const res = await fetch(`${PATH}?missing=null`, { credentials: 'same-origin' });
    if (!res.ok) return { companion: EMPTY_COMPANION_SAVE, lawn: null };
    const body = (await res.json()) as { revision: number; save: SaveDocument } | null;
    if (!body) return { companion: EMPTY_COMPANION_SAVE, lawn: null };
    this.revision = body.revision;
    try {
      return fromDocument(body.save);
    } catch {
      return { companion: EMPTY_COMPANION_SAVE, lawn: null };
    }
  }

  /** Saves the companion state with the lawn it belongs to (null lawn: a fresh attempt). */
  write(save: CompanionSave, lawn: Lawn | null): void {
    this.#pending = saveDocument(save, lawn ? lawnSnapshot(lawn) : null);
    this.#set('saving');
    if (!this.#draining) {
      this.#draining = true;
      void this.#drain();
    }
  }

  /** When the page goes away with a write still waiting, it is sent with keepalive. */
  flushOnExit(): void {
    const doc = this.#pending;
    if (!doc) return;
    this.#pending = null;
    void fetch(PATH, {
      method: 'PUT',
      credentials: 'same-origin',
      keepalive: true,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ revision: this.revision, save: doc, defeated: false }),
    }).catch(() => {});
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending) {
        const wait = this.#lastWriteAt + WRITE_GAP_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const doc = this.#pending;
        if (!doc) break;
        this.#pending = null;
        this.#lastWriteAt = Date.now();
        const outcome = await this.#put(doc).catch((): PutOutcome => 'failed');
        if (typeof outcome === 'object') {
          // Saving too often for the server: keep the newest state and try again after its pause.
          this.#pending ??= doc;
          this.#lastWriteAt = Date.now() + Math.min(outcome.retryAfterMs, 30_000) - WRITE_GAP_MS;
          continue;
        }
        if (!this.#pending) this.#set(outcome);
      }
    } finally {
      // No await between the last check of #pending and here: a write() cannot slip in unseen.
      this.#draining = false;
    }
  }

  /** One write; a stale revision re-reads the current one and retries once. */
  async #put(doc: SaveDocument): Promise<PutOutcome> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await fetch(PATH, {
        method: 'PUT',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ revision: this.revision, save: doc, defeated: false }),
      });
      if (res.ok) {
        this.revision = ((await res.json()) as { revision: number }).revision;
        return 'saved';
      }
      if (res.status === 429) return { retryAfterMs: 1_000 * (Number(res.headers.get('retry-after')) || 5) };
      if (res.status !== 409) return 'failed';
      const current = await fetch(`${PATH}?missing=null`, { credentials: 'same-origin' });
      this.revision = current.ok ? (((await current.json()) as { revision: number } | null)?.revision ?? 0) : 0;
    }
    return 'failed';
  }
}
