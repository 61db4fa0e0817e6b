/** What the room page reads from the platform API (docs/ROOMS.md: GET /api/rooms/:id and its live stream). */
import type { PlayerMessage, PlayerWorldState } from '../player/player-types.ts';

export type TriggerMode = 'manual' | 'timer' | 'round' | 'instant';
export type SpeechMode = 'free' | 'turns';
export type RoundState = 'waiting' | 'collecting' | 'replying';
export type Role = 'host' | 'player' | 'spectator';

export interface RoomStatus {
  id: string;
  worldId: string;
  title: string;
  triggerMode: TriggerMode;
  timerSeconds: number;
  speechMode: SpeechMode;
  turnParticipantId: string | null;
  roundState: RoundState;
  collectUntil: string | null;
  endedAt: string | null;
  maxPlayers: number;
  maxSpectators: number;
  /** A status is applied only when its version is newer than the one shown. */
  version: number;
}

export interface QueuedMessage {
  id: string;
  participantId: string;
  authorName: string;
  content: string;
  createdAt: string;
}

export interface Member {
  id: string;
  kind: string;
  role: Role;
  accountId: string | null;
  name: string;
  picture: string | null;
  online: boolean;
}

export interface RoomMessage extends PlayerMessage {
  /** The member who wrote a player's message, and their name (the persona's when they had one). */
  participantId?: string;
  authorName?: string;
}

export interface RoomState extends PlayerWorldState {
  /** The viewer's own per-player values only: `{ <accountId>: { <variableId>: value } }`. */
  playerVariables?: Record<string, Record<string, unknown>>;
}

export interface Payer {
  source: 'connection' | 'credits' | 'mixed' | 'none';
  model: string | null;
}

export interface RoomSnapshot {
  room: RoomStatus;
  queue: QueuedMessage[];
  members: Member[];
  me: { participantId: string | null; role: Role | 'owner'; accountId: string };
  payer: Payer;
  session: { id: string; worldId: string; title: string; state: RoomState };
  messages: RoomMessage[];
  history?: { earlierCursor: string | null };
  /** The live stream opens after this event id. */
  eventId: string;
}

export interface Invite {
  id: string;
  role: 'player' | 'spectator';
  expiresAt: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface RoomTerms {
  allowed: boolean;
  payer: Payer;
  limits: { maxPlayers: number; maxSpectators: number };
}

export const TRIGGER_LABELS: Record<TriggerMode, string> = {
  manual: 'Manual: the host presses “Reply now”',
  timer: 'Timer: some seconds after the round’s first message',
  round: 'Round: once every player online has written',
  instant: 'Instant: at each message',
};

export const SPEECH_LABELS: Record<SpeechMode, string> = {
  free: 'Free: everyone writes, messages queue',
  turns: 'Turn-based: one player at a time, the host passes the turn',
};

/** Who pays, in a sentence for the host before the room opens (and for every member in it). */
export function payerText(payer: Payer): string {
  const model = payer.model ? ` (model ${payer.model})` : '';
  switch (payer.source) {
    case 'connection':
      return `The host pays: replies run on the host’s own AI connection${model}.`;
    case 'credits':
      return `The host pays: replies use the host’s platform credits${model}.`;
    case 'mixed':
      return `The host pays: replies use the host’s own AI connection or the host’s platform credits, as the host’s settings choose${model}.`;
    default:
      return 'No AI connection or credits are set up for the host yet: replies will fail until the host sets one up in Settings → AI connection.';
  }
}
