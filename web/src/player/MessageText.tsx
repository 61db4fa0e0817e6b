/**
 * A chat message's text in the player (outside the sandbox): plain text, except Markdown images of
 * the world's own assets, `![alt](asset://<id>)`, which render as images through the same
 * `resolveAssetUrl` the sandbox uses (so only the current world's assets, signed when private).
 * Other image URLs stay text: a reply never makes the reader's browser fetch an arbitrary address.
 */
import { type AssetScope, assetIdOf, resolveAssetUrl } from '@yumina/sandbox';
import type { ReactNode } from 'react';

const IMAGE = /!\[([^\]\n]{0,200})\]\(([^()\s]{1,300})\)/g;

/** The text split into strings and asset images (`{ alt, ref }`), in order. */
export function splitAssetImages(text: string): (string | { alt: string; ref: string })[] {
  const parts: (string | { alt: string; ref: string })[] = [];
  let last = 0;
  for (const match of text.matchAll(IMAGE)) {
    const [whole, alt, ref] = match as unknown as [string, string, string];
    if (!assetIdOf(ref)) continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push({ alt, ref });
    last = match.index + whole.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

export function MessageText({ text, scope }: { text: string; scope: AssetScope | null }): ReactNode {
  return splitAssetImages(text).map((part, i) => {
    if (typeof part === 'string') return part;
    const src = scope ? resolveAssetUrl(part.ref, scope) : '';
    // Without a scope yet the image waits rather than loading a URL that would be refused.
    return src ? <img key={i} className="message-image" style={{ display: 'block', maxWidth: '100%' }} src={src} alt={part.alt} data-asset-ref={part.ref} /> : <span key={i}>{part.alt}</span>;
  });
}
