/**
 * The shared LRU of token counts, bounded both by entries and by the characters of its keys
 * (a count is a small number; the key text is what costs memory). Insertion order of a Map is the
 * recency order: a hit moves the entry to the end, eviction takes from the front.
 */
export const LRU_MAX_ENTRIES = 1024;
export const LRU_MAX_CHARS = 2_000_000;

export class CountLru {
  private readonly map = new Map<string, number>();
  private chars = 0;

  constructor(
    readonly maxEntries = LRU_MAX_ENTRIES,
    readonly maxChars = LRU_MAX_CHARS,
  ) {}

  get size(): number {
    return this.map.size;
  }

  /** Total characters of the cached keys. */
  get totalChars(): number {
    return this.chars;
  }

  get(key: string): number | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  /** Caches a count; an entry whose key alone exceeds the character budget is not cached. */
  set(key: string, value: number): void {
    if (key.length > this.maxChars) return;
    if (this.map.delete(key)) this.chars -= key.length;
    while (this.map.size > 0 && (this.map.size >= this.maxEntries || this.chars + key.length > this.maxChars)) {
      const oldest = this.map.keys().next().value!;
      this.map.delete(oldest);
      this.chars -= oldest.length;
    }
    this.map.set(key, value);
    this.chars += key.length;
  }

  clear(): void {
    this.map.clear();
    this.chars = 0;
  }
}
