/**
 * How a room page applies what its live stream says (docs/ROOMS.md, "The live stream"): pure
 * functions of the shown snapshot, so that a replayed or late event changes nothing it should not.
 */
import type { QueuedMessage, RoomMessage, RoomSnapshot, RoomStatus } from './room-types.ts';

/** The reply being written: its message, the text it continues (a `continue`), and what arrived. */
export interface Streaming {
  messageId: string;
  base: string;
  text: string;
}

/** A snapshot read while the stream already applied a newer room status keeps the newer one. */
export function newerRoom(shown: RoomSnapshot | null, next: RoomSnapshot): RoomSnapshot {
  if (shown && shown.room.version > next.room.version) return { ...next, room: shown.room, queue: shown.queue };
  return next;
}

/** A `room` event: applied only when its status is newer than the one shown. */
export function withRoomStatus(shown: RoomSnapshot | null, room: RoomStatus, queue: QueuedMessage[]): RoomSnapshot | null {
  return shown && room.version > shown.room.version ? { ...shown, room, queue } : shown;
}

/** A message list with `m` in it (replacing the one of its id), in position order. */
export function withMessage(list: RoomMessage[], m: RoomMessage): RoomMessage[] {
  const at = list.findIndex((x) => x.id === m.id);
  if (at >= 0) return list.map((x, i) => (i === at ? m : x));
  return [...list, m].sort((a, b) => a.position - b.position);
}

/**
 * `reply:start`: the round's messages join the conversation (once each), and the reply being
 * written is shown as streaming at `position`; a retried round's failure notice goes.
 */
export function withReplyStarted(shown: RoomSnapshot | null, messageId: string, position: number | null, round: RoomMessage[]): RoomSnapshot | null {
  if (!shown) return shown;
  let messages = shown.messages;
  for (const m of round) messages = withMessage(messages, m);
  const existing = messages.find((m) => m.id === messageId);
  const reply: RoomMessage = {
    ...(existing ?? {
      id: messageId,
      role: 'assistant',
      content: '',
      errorMessage: null,
      stateChanges: [],
      swipes: [],
      activeSwipeIndex: 0,
      stateSnapshot: null,
      model: null,
      tokenCount: null,
      generationTimeMs: null,
      compacted: false,
      attachments: [],
      createdAt: new Date().toISOString(),
    }),
    position: position ?? existing?.position ?? (messages.at(-1)?.position ?? 0) + 1,
    status: 'streaming',
    failure: null,
  };
  messages = messages.map((m) => (m.failure ? { ...m, failure: null } : m));
  return { ...shown, messages: withMessage(messages, reply) };
}

/** A `delta`: its text goes at `at` (a replayed delta overwrites what it wrote before instead of repeating it). */
export function withDelta(streaming: Streaming | null, messageId: string, at: number, text: string): Streaming | null {
  if (!streaming || streaming.messageId !== messageId) return streaming;
  return { ...streaming, text: streaming.text.slice(0, Math.min(at, streaming.text.length)) + text };
}
