/**
 * A message's text as it is read aloud (issue 50, voice): Markdown marks, links' targets, images
 * and code blocks out; *actions between asterisks* (or _underscores_) read as words or skipped, as
 * the player chose. The browser's speech and the provider's both read this, so they say the same.
 */
export type SpokenActions = 'read' | 'skip';

export function spokenText(text: string, actions: SpokenActions = 'read'): string {
  let out = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, ' ');
  // Bold first (**x**, __x__): it is emphasis, never an action.
  out = out.replace(/\*\*([^*]+)\*\*/g, '$1').replace(/__([^_]+)__/g, '$1');
  out = out.replace(/(^|[^\w*])\*([^*\n]+)\*(?!\w)/g, (_m, before: string, inner: string) => (actions === 'skip' ? `${before} ` : `${before}${inner}`));
  out = out.replace(/(^|[^\w_])_([^_\n]+)_(?!\w)/g, (_m, before: string, inner: string) => (actions === 'skip' ? `${before} ` : `${before}${inner}`));
  out = out.replace(/^#{1,6}\s+/gm, '').replace(/^\s*[-*+>]\s+/gm, '').replace(/`([^`]*)`/g, '$1');
  return out.replace(/[ \t]+/g, ' ').replace(/\s*\n\s*/g, '\n').trim();
}
