import { z } from 'zod';

// Line breaks and tabs of every kind (CR, LF, tab, vertical tab, form feed, NEL, U+2028, U+2029).
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
// The other control characters: C0, DEL and C1, and the bidirectional embeddings, overrides and
// isolates (U+202A–U+202E, U+2066–U+2069), which reorder the text around a name when it is shown.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A name as one line of visible text: each line break or tab becomes a space, every other control
 * character is removed, runs of spaces become one, and the ends are trimmed. A display name goes into
 * mail, other players' screens, partners' tokens and logs: a CR/LF there forged lines.
 */
export function oneLineText(value: string): string {
  return value.replace(BREAKS, ' ').replace(CONTROLS, '').replace(/ {2,}/g, ' ').trim();
}

/** A zod field of one line of at most `max` characters once cleaned (oneLineText), never empty. */
export function oneLineField(max: number) {
  return z
    .string()
    .max(max * 10, `must be at most ${max} characters`)
    .transform(oneLineText)
    .pipe(z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`));
}
