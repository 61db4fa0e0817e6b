import type { TurnHistoryMessage } from './turn.ts';

/** A session's history as a turn read it: the messages at positions below `length`, and the fingerprint of their tuple versions. */
export interface CachedHistory {
  length: number;
  /**
   * bit_xor over the rows of a hash of each row's xmin (the transaction that wrote its version)
   * seeded by its position (unique in a session), in PostgreSQL: every insert, update or delete
   * of a message writes a new version by a later transaction (or removes one), so any change to
   * the history below `length` changes it. Computed from system columns: no message text is read.
   */
  fingerprint: string;
  messages: readonly TurnHistoryMessage[];
}

/**
 * Per-process copies of session histories, so a turn reads only what changed since the turn
 * before it (usually the previous exchange) instead of the whole conversation: startTurn sends
 * the cached length, PostgreSQL answers the fingerprint of the rows below it and the rows from it
 * on, and a mismatch (an edit, a revert, a settled reply, another replica's turns) costs one full
 * read. Least recently used sessions go first once the texts held pass `maxChars`; a history of
 * more than a quarter of that is never kept.
 */
export class HistoryCache {
  readonly #entries = new Map<string, CachedHistory & { chars: number }>();
  #chars = 0;
  #misses = 0;

  constructor(readonly maxChars = 16_000_000) {}

  /** Cached histories whose fingerprint no longer matched (each cost a full read). */
  get misses(): number {
    return this.#misses;
  }

  get size(): number {
    return this.#entries.size;
  }

  get chars(): number {
    return this.#chars;
  }

  get(sessionId: string): CachedHistory | undefined {
    const entry = this.#entries.get(sessionId);
    if (entry) {
      this.#entries.delete(sessionId);
      this.#entries.set(sessionId, entry);
    }
    return entry;
  }

  set(sessionId: string, history: CachedHistory): void {
    this.delete(sessionId);
    let chars = 0;
    for (const m of history.messages) chars += m.content.length;
    if (chars > this.maxChars / 4) return;
    this.#entries.set(sessionId, { ...history, chars });
    this.#chars += chars;
    for (const [key, entry] of this.#entries) {
      if (this.#chars <= this.maxChars) break;
      this.#entries.delete(key);
      this.#chars -= entry.chars;
    }
  }

  delete(sessionId: string): void {
    const entry = this.#entries.get(sessionId);
    if (!entry) return;
    this.#entries.delete(sessionId);
    this.#chars -= entry.chars;
  }

  /** Counts a fingerprint mismatch (startTurn). */
  miss(): void {
    this.#misses++;
  }
}
