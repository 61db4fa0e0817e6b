/**
 * Which message is being read aloud, and the two calls the chat makes (read, stop), without the
 * reader itself: ./voice.ts loads on the first reading, so the player's first load carries none of it.
 */
import type { ReadRequest } from './voice.ts';

type Listener = (messageId: string | null) => void;
const listeners = new Set<Listener>();
let loaded: typeof import('./voice.ts') | null = null;

export const reading = {
  current: null as string | null,
  set(id: string | null) {
    reading.current = id;
    for (const l of listeners) l(id);
  },
  subscribe(l: Listener): () => void {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

export async function readAloud(request: ReadRequest): Promise<void> {
  loaded ??= await import('./voice.ts');
  await loaded.reader.read(request);
}

/** Ends any reading (nothing to do before the reader was ever loaded). */
export function stopReading(): void {
  loaded?.reader.stop();
}
