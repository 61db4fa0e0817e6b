/**
 * The frame runtime's source text. Vite bundles frame/runtime.tsx (with React) as one classic,
 * self-contained script (the worker pipeline, format iife) and gives its URL; the parent fetches the
 * text once from its own origin and inlines it into every frame document it builds.
 */
import runtimeUrl from './frame/runtime.tsx?worker&url';

let cached: Promise<string> | null = null;

export function loadFrameRuntime(): Promise<string> {
  cached ??= fetch(runtimeUrl, { credentials: 'same-origin' }).then((res) => {
    if (!res.ok) throw new Error(`The sandbox runtime could not be loaded (${res.status})`);
    return res.text();
  });
  cached.catch(() => {
    cached = null;
  });
  return cached;
}
