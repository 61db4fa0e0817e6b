import { describe, expect, it } from 'vitest';
import { type GroupCharacter, mentionAt, pickSpeakers, speakerHistory } from './group.ts';

const cast = (...specs: [name: string, talkativeness: number, muted?: boolean][]): GroupCharacter[] =>
  specs.map(([name, talkativeness, muted = false], position) => ({ id: `ptc_${name.split(' ')[0]!.toLowerCase()}`, name, worldId: null, muted, talkativeness, position }));
/** A fixed sequence of draws. */
const draws = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};
const names = (picked: GroupCharacter[]) => picked.map((c) => c.name);

describe('who speaks in a group scene', () => {
  it('finds a name as a whole word in any case, a first name of a longer one, and names in scripts without spaces anywhere', () => {
    expect(mentionAt('What do you think, mira?', 'Mira')).toBe(19);
    expect(mentionAt('Miranda laughs.', 'Mira')).toBe(-1);
    expect(mentionAt('Ask Captain about it', 'Captain Hale')).toBe(4);
    expect(mentionAt('李白你怎么看', '李白')).toBe(0);
    expect(mentionAt('nobody here', 'Mira')).toBe(-1);
  });

  it('natural: the characters named answer, in the order they are named, before any talkativeness draw', () => {
    const characters = cast(['Mira', 0], ['Bram', 0], ['Cole', 0]);
    expect(names(pickSpeakers('natural', characters, { text: 'Cole, then Mira: your thoughts?', lastSpeakerId: null, random: draws(0.99) }))).toEqual(['Cole', 'Mira']);
  });

  it("natural: talkativeness from the card decides who else speaks up; a character of 0 only when named, and someone always answers", () => {
    const characters = cast(['Mira', 1], ['Bram', 0], ['Cole', 0.5]);
    // Mira (1) always speaks up; Bram (0) never; Cole on a draw under 0.5
    expect(names(pickSpeakers('natural', characters, { text: 'Hello all', lastSpeakerId: null, random: draws(0.4) }))).toEqual(['Mira', 'Cole']);
    expect(names(pickSpeakers('natural', characters, { text: 'Hello all', lastSpeakerId: null, random: draws(0.6) }))).toEqual(['Mira']);
    const quiet = cast(['Mira', 0], ['Bram', 0]);
    expect(pickSpeakers('natural', quiet, { text: 'Hello', lastSpeakerId: null, random: draws(0.9) })).toHaveLength(1);
    // the weighted fallback: of 0.2 and 0.6 (no draw under either first), 0.7 of the total 0.8 falls on the second
    const shy = cast(['Mira', 0.2], ['Bram', 0.6]);
    expect(names(pickSpeakers('natural', shy, { text: 'Hello', lastSpeakerId: null, random: draws(0.95, 0.95, 0.875) }))).toEqual(['Bram']);
  });

  it('the last speaker does not answer itself while another can; muted characters never speak unless chosen', () => {
    const characters = cast(['Mira', 1], ['Bram', 1], ['Cole', 1, true]);
    expect(names(pickSpeakers('natural', characters, { text: 'Mira and Cole?', lastSpeakerId: 'ptc_mira', random: draws(0.1) }))).toEqual(['Bram']);
    expect(names(pickSpeakers('everyone', characters, { text: '', lastSpeakerId: null, random: draws(0) }))).toEqual(['Mira', 'Bram']);
    expect(names(pickSpeakers('natural', characters, { text: '', lastSpeakerId: null, chosenId: 'ptc_cole', random: draws(0) }))).toEqual(['Cole']);
  });

  it('in turn: the next in list order after the last speaker, skipping the muted; choose: only the pick', () => {
    const characters = cast(['Mira', 0], ['Bram', 0, true], ['Cole', 0]);
    const next = (last: string | null) => names(pickSpeakers('in-turn', characters, { text: '', lastSpeakerId: last, random: draws(0) }));
    expect(next(null)).toEqual(['Mira']);
    expect(next('ptc_mira')).toEqual(['Cole']);
    expect(next('ptc_cole')).toEqual(['Mira']);
    expect(pickSpeakers('choose', characters, { text: 'Mira?', lastSpeakerId: null, random: draws(0) })).toEqual([]);
    expect(names(pickSpeakers('choose', characters, { text: '', lastSpeakerId: null, chosenId: 'ptc_bram', random: draws(0) }))).toEqual(['Bram']);
  });
});

describe("the scene from a speaker's side", () => {
  const scene = [
    { role: 'assistant' as const, content: 'Welcome.', status: 'complete' as const, participantId: 'ptc_mira', authorName: 'Mira' },
    { role: 'assistant' as const, content: 'Hmph.', status: 'complete' as const, participantId: 'ptc_bram', authorName: 'Bram' },
    { role: 'user' as const, content: 'Hello both.', status: 'complete' as const, participantId: null, authorName: 'Ada' },
    { role: 'assistant' as const, content: 'Hello, Ada.', status: 'complete' as const, participantId: 'ptc_mira', authorName: 'Mira' },
    { role: 'assistant' as const, content: 'half', status: 'failed' as const, participantId: 'ptc_bram', authorName: 'Bram' },
  ];

  it("the speaker's replies are the assistant's; everyone else's lines, named, are the message it answers", () => {
    expect(speakerHistory(scene, 'ptc_bram', 'Player')).toEqual({
      history: [
        { role: 'user', content: 'Mira: Welcome.' },
        { role: 'assistant', content: 'Hmph.' },
      ],
      userMessage: 'Ada: Hello both.\n\nMira: Hello, Ada.',
    });
    expect(speakerHistory(scene, 'ptc_mira', 'Player')).toEqual({
      history: [
        { role: 'assistant', content: 'Welcome.' },
        { role: 'user', content: 'Bram: Hmph.\n\nAda: Hello both.' },
        { role: 'assistant', content: 'Hello, Ada.' },
      ],
      userMessage: '(The scene goes on.)',
    });
  });
});
