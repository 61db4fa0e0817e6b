/**
 * A small, safe Markdown subset for chat text, shared by the frame (`renderMarkdown`) and the
 * player's default chat. HTML is escaped first, so no tag or attribute of the source survives;
 * then fenced code, bulleted and numbered lists, emphasis, inline code and line breaks. Images are
 * kept only when `image` turns their reference into a URL (the player: the world's own assets).
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export interface MarkdownOptions {
  /** An image reference (already HTML-escaped) to a safe URL, or null to keep the alt text. */
  image?: (ref: string) => string | null;
}

const IMAGE = /!\[([^\]\n]{0,200})\]\(([^()\s]{1,300})\)/g;

function inline(text: string, options: MarkdownOptions): string {
  const withImages = text.replace(IMAGE, (_whole, alt: string, ref: string) => {
    const url = options.image?.(ref.replace(/&amp;/g, '&')) ?? null;
    return url ? `<img class="message-image" src="${escapeHtml(url)}" alt="${alt}" data-asset-ref="${ref}">` : alt;
  });
  return withImages
    .replace(/`([^`\n]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*\n]+)\*/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_([^_\n]+)_(?![\w])/g, '$1<em>$2</em>');
}

function block(paragraph: string, options: MarkdownOptions): string {
  const lines = paragraph.split('\n');
  if (lines.every((line) => /^\s*[-*+]\s+/.test(line)))
    return `<ul>${lines.map((line) => `<li>${inline(line.replace(/^\s*[-*+]\s+/, ''), options)}</li>`).join('')}</ul>`;
  if (lines.every((line) => /^\s*\d+[.)]\s+/.test(line)))
    return `<ol>${lines.map((line) => `<li>${inline(line.replace(/^\s*\d+[.)]\s+/, ''), options)}</li>`).join('')}</ol>`;
  return `<p>${inline(paragraph, options).replace(/\n/g, '<br>')}</p>`;
}

export function renderMarkdown(text: string, options: MarkdownOptions = {}): string {
  const source = escapeHtml(String(text ?? '')).replace(/\r\n/g, '\n');
  const out: string[] = [];
  // Fenced code first: its inside is shown as is (already escaped).
  const parts = source.split(/^```[^\n]*\n([\s\S]*?)^```\s*$/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out.push(`<pre><code>${part.replace(/\n$/, '')}</code></pre>`);
      return;
    }
    for (const paragraph of part.split(/\n{2,}/)) {
      const trimmed = paragraph.trim();
      if (trimmed) out.push(block(trimmed, options));
    }
  });
  return out.join('');
}
