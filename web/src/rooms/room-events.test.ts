import { describe, expect, it } from 'vitest';
import { newerRoom, withDelta, withReplyStarted, withRoomStatus } from './room-events.ts';
import type { RoomMessage, RoomSnapshot, RoomStatus } from './room-types.ts';

const status = (version: number, roundState: RoomStatus['roundState'] = 'waiting'): RoomStatus => ({
  id: 'cnv_1',
  worldId: 'w',
  title: 'Room',
  triggerMode: 'manual',
  timerSeconds: 30,
  speechMode: 'free',
  turnParticipantId: null,
  roundState,
  collectUntil: null,
  endedAt: null,
  maxPlayers: 8,
  maxSpectators: 50,
  version,
});
const message = (id: string, position: number, extra: Partial<RoomMessage> = {}): RoomMessage => ({
  id,
  position,
  role: 'user',
  content: id,
  status: 'complete',
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
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});
const snapshot = (version: number, messages: RoomMessage[] = []): RoomSnapshot => ({
  room: status(version),
  queue: [],
  members: [],
  me: { participantId: 'ptc_a', role: 'player', accountId: 'acc_a' },
  payer: { source: 'connection', model: null },
  session: { id: 'cnv_1', worldId: 'w', title: 'Room', state: { variables: {} } },
  messages,
  eventId: '1-0',
});

describe('a room page applies its live stream', () => {
  it('applies a room status only when it is newer than the one shown (a late or replayed one changes nothing)', () => {
    const shown = snapshot(5);
    expect(withRoomStatus(shown, status(4, 'collecting'), [])).toBe(shown);
    expect(withRoomStatus(shown, status(5, 'collecting'), [])).toBe(shown);
    const next = withRoomStatus(shown, status(6, 'collecting'), [{ id: 'q', participantId: 'ptc_a', authorName: 'Ann', content: 'hi', createdAt: '' }]);
    expect(next?.room.roundState).toBe('collecting');
    expect(next?.queue).toHaveLength(1);
  });

  it('a snapshot read again keeps a newer status the stream brought meanwhile, and takes everything else', () => {
    const shown = { ...snapshot(7), queue: [{ id: 'q', participantId: 'ptc_a', authorName: 'Ann', content: 'hi', createdAt: '' }] };
    const older = snapshot(6, [message('m1', 1)]);
    const kept = newerRoom(shown, older);
    expect(kept.room.version).toBe(7);
    expect(kept.queue).toHaveLength(1);
    expect(kept.messages.map((m) => m.id)).toEqual(['m1']);
    expect(newerRoom(shown, snapshot(8)).room.version).toBe(8);
  });

  it('a reply that starts adds the round once, shows the reply as streaming and clears a retried failure', () => {
    const failed = message('m1', 1, { failure: { code: 'REPLY_INTERRUPTED', message: 'stopped' } });
    const shown = snapshot(1, [failed]);
    const round = [message('m2', 2), message('m3', 3)];
    const once = withReplyStarted(shown, 'r1', 4, round)!;
    const twice = withReplyStarted(once, 'r1', 4, round)!;
    expect(twice.messages.map((m) => [m.id, m.status])).toEqual([
      ['m1', 'complete'],
      ['m2', 'complete'],
      ['m3', 'complete'],
      ['r1', 'streaming'],
    ]);
    expect(twice.messages[0]!.failure).toBeNull();
  });

  it('puts each delta where `at` says: a replayed delta is not written twice, another message’s is ignored', () => {
    let s = withDelta({ messageId: 'r1', base: '', text: '' }, 'r1', 0, 'The ghoul ');
    s = withDelta(s, 'r1', 10, 'rises.');
    expect(withDelta(s, 'r1', 10, 'rises.')?.text).toBe('The ghoul rises.');
    expect(withDelta(s, 'r2', 16, ' More.')?.text).toBe('The ghoul rises.');
    expect(withDelta(null, 'r1', 0, 'x')).toBeNull();
  });
});
