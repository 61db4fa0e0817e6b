import { type ObjectStore, widthVariant } from '@yumina/assets';

/**
 * Resized copies of uploaded images (covers and avatars drawn in a box far smaller than the
 * upload, which may be 8 MB): `?w=<width>` on an asset's read route answers a WebP of at most that
 * width (never enlarged), made once by @yumina/assets' widthVariant (sharp: decoding and encoding
 * run on libuv's threads, not the event loop) and kept in the object store beside the original.
 * Only the widths the web app asks for are made (web/src/library/world-card.tsx: 360 and 480 css
 * px, ×2 for dense screens), so a stranger cannot fill the store with sizes. Animated GIFs keep
 * their original.
 */
export const VARIANT_WIDTHS = [360, 480, 720, 960] as const;
const RESIZABLE = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/avif']);
export const variantKey = (worldId: string, assetId: string, width: number) => `variants/${worldId}/${assetId}/w${width}.webp`;

export function variantWidth(raw: unknown): number | null {
  const width = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  return (VARIANT_WIDTHS as readonly number[]).includes(width) ? width : null;
}

export const canResize = (contentType: string) => RESIZABLE.has(contentType);

/** Variants being made right now, so concurrent first requests make one. */
const making = new Map<string, Promise<Uint8Array | null>>();

/**
 * The stored variant, or a new one made from `original()` and stored; null when the source cannot
 * be resized (corrupt, too large): the caller then sends the original.
 */
export function imageVariant(objects: ObjectStore, key: string, original: () => Promise<Uint8Array | null>, width: number): Promise<Uint8Array | null> {
  let pending = making.get(key);
  if (!pending) {
    pending = (async () => {
      const stored = await objects.get(key);
      if (stored) return stored.bytes;
      const source = await original();
      if (!source) return null;
      const bytes = await widthVariant(source, width);
      if (bytes) await objects.put(key, bytes, 'image/webp');
      return bytes;
    })().finally(() => making.delete(key));
    making.set(key, pending);
  }
  return pending;
}
