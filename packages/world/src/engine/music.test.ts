import { describe, expect, it } from 'vitest';
import type { AudioCommand } from './audio-command.ts';
import type { WorldState } from './state.ts';
import { runTurn, startSession } from './turn.ts';
import type { EngineConditionalBgm, EngineWorld } from './world-types.ts';

const NOW = '2026-05-01T12:00:00Z';

function worldWith(extra: Partial<EngineWorld>): EngineWorld {
  return {
    name: 'Music',
    entries: [],
    variables: [
      { id: 'danger', type: 'number', defaultValue: 0 },
      { id: 'boss', type: 'boolean', defaultValue: false },
    ],
    audioTracks: [
      { id: 'calm-1', type: 'bgm' },
      { id: 'calm-2', type: 'bgm' },
      { id: 'calm-3', type: 'bgm' },
      { id: 'battle', type: 'bgm', fadeIn: 1, fadeOut: 2 },
      { id: 'boss-theme', type: 'bgm' },
      { id: 'victory', type: 'bgm' },
    ],
    ...extra,
  };
}

function summary(commands: readonly AudioCommand[]): string[] {
  return commands.map((command) => {
    switch (command.action) {
      case 'playlist-start':
        return `playlist-start:${command.trackIds.join(',')}`;
      case 'playlist-stop':
        return 'playlist-stop';
      case 'volume':
        return `volume:${command.trackId}`;
      default:
        return `${command.action}:${command.trackId}`;
    }
  });
}

function turns(world: EngineWorld, steps: { user?: string; reply?: string }[], initial: Partial<WorldState> | null = null): string[][] {
  let state: Partial<WorldState> | null = initial;
  return steps.map((step) => {
    const result = runTurn(world, state, { userMessage: step.user ?? '', aiReply: step.reply ?? '', now: NOW, seed: 11, sessionId: 'music' });
    state = result.state;
    return summary(result.audioCommands);
  });
}

const playlist = (playMode: 'loop' | 'shuffle' | 'sequential', extra = {}) => ({ tracks: ['calm-1', 'calm-2', 'calm-3'], playMode, gapSeconds: 4, ...extra });

describe('playlist', () => {
  it.each([
    ['loop repeats in order', 'loop', true],
    ['sequential plays once through', 'sequential', false],
  ] as const)('%s', (_name, mode, repeat) => {
    const { audioCommands } = startSession(worldWith({ bgmPlaylist: playlist(mode) }), { now: NOW, seed: 1 });
    expect(audioCommands).toEqual([{ action: 'playlist-start', trackIds: ['calm-1', 'calm-2', 'calm-3'], mode, repeat, gapSeconds: 4, source: 'playlist' }]);
  });

  it('shuffle is a seeded permutation: stable per session, different across sessions', () => {
    const world = worldWith({ bgmPlaylist: { ...playlist('shuffle'), tracks: ['calm-1', 'calm-2', 'calm-3', 'battle', 'boss-theme', 'victory'] } });
    const orderFor = (sessionId: string) => {
      const command = startSession(world, { now: NOW, seed: 1, sessionId }).audioCommands[0];
      return command?.action === 'playlist-start' ? command.trackIds.join(',') : '';
    };
    expect(orderFor('a')).toBe(orderFor('a'));
    expect(orderFor('a').split(',').sort()).toEqual(['battle', 'boss-theme', 'calm-1', 'calm-2', 'calm-3', 'victory']);
    const orders = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map(orderFor));
    expect(orders.size).toBeGreaterThan(1);
  });

  it('waitForFirstMessage defers the start to the first turn, once', () => {
    const world = worldWith({ bgmPlaylist: playlist('loop', { waitForFirstMessage: true }) });
    expect(startSession(world, { now: NOW }).audioCommands).toEqual([]);
    expect(turns(world, [{}, {}])).toEqual([['playlist-start:calm-1,calm-2,calm-3'], []]);
  });

  it('autoPlay false never starts it', () => {
    const world = worldWith({ bgmPlaylist: playlist('loop', { autoPlay: false }) });
    expect(startSession(world, { now: NOW }).audioCommands).toEqual([]);
    expect(turns(world, [{}])).toEqual([[]]);
  });

  it('gapSeconds is capped at 30', () => {
    const command = startSession(worldWith({ bgmPlaylist: playlist('loop', { gapSeconds: 90 }) }), { now: NOW }).audioCommands[0];
    expect(command).toMatchObject({ gapSeconds: 30 });
  });
});

describe('conditional BGM', () => {
  const battle: EngineConditionalBgm = {
    id: 'battle-music',
    targetTrackId: 'battle',
    triggerType: 'variable',
    conditions: [{ variableId: 'danger', operator: 'gte', value: 5 }],
    priority: 1,
    stopPreviousBGM: true,
    fadeInDuration: 3,
    fadeOutDuration: 4,
    fallback: 'default',
  };
  const boss: EngineConditionalBgm = {
    id: 'boss-music',
    targetTrackId: 'boss-theme',
    triggerType: 'variable',
    conditions: [{ variableId: 'boss', operator: 'eq', value: true }],
    priority: 5,
    stopPreviousBGM: true,
  };

  it('a variable trigger takes over from the playlist with fades and falls back to it', () => {
    const world = worldWith({ bgmPlaylist: playlist('loop'), conditionalBGM: [battle] });
    const initial = startSession(world, { now: NOW }).state;
    initial.audio.playlistPlaying = true;
    const result = turns(world, [{ reply: '[danger: 6]' }, { reply: 'still fighting' }, { reply: '[danger: 0]' }], initial);
    expect(result).toEqual([['playlist-stop', 'play:battle'], [], ['stop:battle', 'playlist-start:calm-1,calm-2,calm-3']]);
    const first = runTurn(world, initial, { userMessage: '', aiReply: '[danger: 6]', now: NOW });
    expect(first.audioCommands).toMatchObject([
      { action: 'playlist-stop', fadeOutSeconds: 4 },
      { action: 'play', trackId: 'battle', fadeInSeconds: 3 },
    ]);
  });

  it('the higher priority wins when both hold; when it ends the lower one takes over', () => {
    const world = worldWith({ conditionalBGM: [battle, boss] });
    const result = turns(world, [{ reply: '[danger: 9] [boss: true]' }, { reply: '[boss: false]' }, { reply: '[danger: 0]' }]);
    expect(result).toEqual([['play:boss-theme'], ['stop:boss-theme', 'play:battle'], ['stop:battle']]);
  });

  it('fallback previous resumes the track that played before', () => {
    const world = worldWith({ conditionalBGM: [{ ...battle, fallback: 'previous' }] });
    const result = turns(world, [{ reply: '[audio: calm-2 play]' }, { reply: '[danger: 7]' }, { reply: '[danger: 1]' }]);
    expect(result).toEqual([['play:calm-2'], ['stop:calm-2', 'play:battle'], ['stop:battle', 'play:calm-2']]);
  });

  it('fallback to a track id plays that track', () => {
    const world = worldWith({ conditionalBGM: [{ ...battle, fallback: 'victory' }] });
    expect(turns(world, [{ reply: '[danger: 7]' }, { reply: '[danger: 1]' }])).toEqual([['play:battle'], ['stop:battle', 'play:victory']]);
  });

  it.each([
    ['false', false],
    ['absent (the schema default is false)', undefined],
  ])('stopPreviousBGM %s leaves the previous music playing', (_name, stopPreviousBGM) => {
    const world = worldWith({ conditionalBGM: [{ ...battle, stopPreviousBGM }] });
    expect(turns(world, [{ reply: '[audio: calm-1 play]' }, { reply: '[danger: 7]' }])).toEqual([['play:calm-1'], ['play:battle']]);
  });

  it.each<[string, EngineConditionalBgm, { user?: string; reply?: string }[], string[][]]>([
    [
      'keyword (player) latches until another wins',
      { id: 'k', targetTrackId: 'victory', triggerType: 'keyword', keywords: ['celebrate'], priority: 0 },
      [{ user: 'we celebrate' }, { user: 'and rest' }],
      [['play:victory'], []],
    ],
    ['ai-keyword', { id: 'k', targetTrackId: 'victory', triggerType: 'ai-keyword', keywords: ['victory'] }, [{ user: 'victory?' }, { reply: 'A great victory!' }], [[], ['play:victory']]],
    ['turn-count atTurn', { id: 'k', targetTrackId: 'victory', triggerType: 'turn-count', atTurn: 2 }, [{}, {}], [[], ['play:victory']]],
    ['turn-count everyNTurns', { id: 'k', targetTrackId: 'victory', triggerType: 'turn-count', everyNTurns: 3 }, [{}, {}, {}], [[], [], ['play:victory']]],
    ['session-start', { id: 'k', targetTrackId: 'victory', triggerType: 'session-start' }, [{}, {}], [['play:victory'], []]],
    [
      'edge trigger with conditions stops when they turn false',
      { id: 'k', targetTrackId: 'victory', triggerType: 'keyword', keywords: ['celebrate'], conditions: [{ variableId: 'boss', operator: 'eq', value: false }] },
      [{ user: 'celebrate' }, { reply: '[boss: true]' }],
      [['play:victory'], ['stop:victory']],
    ],
  ])('trigger %s', (_name, bgm, steps, expected) => {
    expect(turns(worldWith({ conditionalBGM: [bgm] }), steps)).toEqual(expected);
  });

  it('a fresh edge trigger replaces a latched one of equal priority', () => {
    const world = worldWith({
      conditionalBGM: [
        { id: 'first', targetTrackId: 'victory', triggerType: 'keyword', keywords: ['party'] },
        { id: 'second', targetTrackId: 'boss-theme', triggerType: 'keyword', keywords: ['duel'], stopPreviousBGM: true },
      ],
    });
    expect(turns(world, [{ user: 'party' }, { user: 'duel' }])).toEqual([['play:victory'], ['stop:victory', 'play:boss-theme']]);
  });
});
