/**
 * `text` shortened to at most `max` characters for a card or a list: whole characters (an emoji or
 * a CJK character is never split in half), ended at the last space of its final fifth when there
 * is one (a word is not cut in the middle), and marked with "…" when anything was left out.
 */
export function excerpt(text: string, max: number): string {
  const chars = Array.from(text.trim());
  if (chars.length <= max) return chars.join('');
  let kept = chars.slice(0, max - 1).join('');
  const space = kept.search(/\s\S*$/);
  if (space >= 0 && Array.from(kept.slice(0, space)).length >= (max - 1) * 0.8) kept = kept.slice(0, space);
  return `${kept.replace(/[\s,.;:!?—–\-，。、；：！？]+$/u, '')}…`;
}

/** A count and its noun: "1 message", "3 messages", "1,204 players" (`many` when the plural is not the noun + s). */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}
