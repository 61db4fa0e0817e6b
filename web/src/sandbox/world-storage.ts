/**
 * Where the storage shims keep a world's values in the parent's own Web Storage: every key is
 * prefixed with the world id, so a world sees only its own keys and never the platform's.
 */
export type StorageArea = 'local' | 'session';

export function storagePrefix(area: StorageArea, worldId: string): string {
  return `yumina:sandbox:${worldId}:${area}:`;
}

export function storageKey(area: StorageArea, worldId: string, key: string): string {
  return storagePrefix(area, worldId) + key;
}

function areaOf(area: StorageArea): Storage | null {
  try {
    return area === 'local' ? window.localStorage : window.sessionStorage;
  } catch {
    return null;
  }
}

/** The world's keys (prefix removed) and values in one area. */
export function storageSnapshot(area: StorageArea, worldId: string): Record<string, string> {
  const storage = areaOf(area);
  const prefix = storagePrefix(area, worldId);
  const out: Record<string, string> = {};
  if (!storage) return out;
  for (let i = 0; i < storage.length; i++) {
    const key = storage.key(i);
    if (key?.startsWith(prefix)) out[key.slice(prefix.length)] = storage.getItem(key) ?? '';
  }
  return out;
}
