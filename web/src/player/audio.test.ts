import { dispatchEvents, parseWorld, runTurn, startSession } from '@yumina/world';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AudioDirector, type AudioEnvironment, type AudioTrackDef, type MediaLike } from './audio.ts';

class FakeMedia implements MediaLike {
  src = '';
  loop = false;
  volume = 1;
  playing = false;
  #ended: (() => void)[] = [];
  play() {
    this.playing = true;
  }
  pause() {
    this.playing = false;
  }
  addEventListener(_type: 'ended', listener: () => void) {
    this.#ended.push(listener);
  }
  end() {
    this.playing = false;
    for (const l of this.#ended) l();
  }
}

/** Manual clock: timers run when the test advances time. */
function environment() {
  const media: FakeMedia[] = [];
  let now = 0;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let next = 1;
  const env: AudioEnvironment = {
    createMedia: () => {
      const m = new FakeMedia();
      media.push(m);
      return m;
    },
    setTimeout: (fn, ms) => {
      const id = next++;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((t) => t.id !== id);
    },
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      timers.sort((a, b) => a.at - b.at);
      const t = timers[0];
      if (!t || t.at > end) break;
      timers.shift();
      now = t.at;
      t.fn();
    }
    now = end;
  };
  return { env, media, advance };
}

const tracks: AudioTrackDef[] = [
  { id: 'theme', type: 'bgm', url: 'asset://audio/theme.ogg', volume: 0.8, fadeOut: 1 },
  { id: 'battle', type: 'bgm', url: 'asset://audio/battle.ogg' },
  { id: 'hit', type: 'sfx', url: 'https://cdn.example/hit.wav', volume: 0.5 },
  { id: 'one', type: 'bgm', url: 'asset://one.ogg' },
  { id: 'two', type: 'bgm', url: 'asset://two.ogg' },
];
const resolve = (u: string) => u.replace('asset://', '/assets/');

describe('AudioDirector', () => {
  it('plays BGM looped at its volume, fades in, applies channel volumes, and fades out on stop', () => {
    const { env, media, advance } = environment();
    const d = new AudioDirector(tracks, resolve, env);
    d.apply([{ action: 'play', trackId: 'theme', trackType: 'bgm', fadeInSeconds: 1 }]);
    expect(media[0]!.src).toBe('/assets/audio/theme.ogg');
    expect(media[0]!.loop).toBe(true);
    expect(media[0]!.volume).toBe(0);
    advance(1000);
    expect(media[0]!.volume).toBeCloseTo(0.8);
    d.setChannelVolume('bgm', 0.5);
    expect(media[0]!.volume).toBeCloseTo(0.4);
    d.apply([{ action: 'volume', trackId: 'theme', volume: 1 }]);
    expect(media[0]!.volume).toBeCloseTo(0.5);
    d.apply([{ action: 'stop', trackId: 'theme' }]);
    advance(500);
    expect(media[0]!.playing).toBe(true); // still fading out (track fadeOut 1 s)
    advance(600);
    expect(media[0]!.playing).toBe(false);
    expect(d.state).toEqual([]);
  });

  it('crossfades between BGM tracks; SFX use their own channel and do not loop; chains play next', () => {
    const { env, media, advance } = environment();
    const d = new AudioDirector(tracks, resolve, env);
    d.apply([{ action: 'play', trackId: 'theme', trackType: 'bgm' }]);
    d.apply([{ action: 'crossfade', trackId: 'battle', trackType: 'bgm', seconds: 2 }]);
    advance(2100);
    expect(media[0]!.playing).toBe(false);
    expect(media[1]!.playing).toBe(true);
    expect(media[1]!.volume).toBeCloseTo(1);
    d.setChannelVolume('sfx', 0.2);
    d.apply([{ action: 'play', trackId: 'hit', trackType: 'sfx', chainTo: 'theme' }]);
    const hit = media[2]!;
    expect(hit.loop).toBe(false);
    expect(hit.volume).toBeCloseTo(0.1);
    hit.end();
    expect(d.state.map((s) => s.trackId).sort()).toEqual(['battle', 'theme']);
  });

  it('plays a playlist in order with its gap, repeating when asked, and stops it', () => {
    const { env, media, advance } = environment();
    const d = new AudioDirector(tracks, resolve, env);
    d.apply([{ action: 'playlist-start', trackIds: ['one', 'two', 'missing'], mode: 'loop', repeat: true, gapSeconds: 2 }]);
    expect(d.state.map((s) => s.trackId)).toEqual(['one']);
    expect(media[0]!.loop).toBe(false);
    media[0]!.end();
    advance(1900);
    expect(d.state).toEqual([]);
    advance(200);
    expect(d.state.map((s) => s.trackId)).toEqual(['two']);
    media[1]!.end();
    advance(2000);
    expect(d.state.map((s) => s.trackId)).toEqual(['one']); // repeats
    d.apply([{ action: 'playlist-stop' }]);
    advance(5000);
    expect(d.state).toEqual([]);
    expect(media.every((m) => !m.playing)).toBe(true);
  });
});

/**
 * A track's own maxDuration (seed 002 §2.10) with the real engine's commands and vitest's fake
 * timers driving the director's timeouts and fades (the environment is the browser's, minus Audio).
 */
describe('a track’s own maxDuration stops it however it was started', () => {
  const world = parseWorld({
    version: '20.0.0',
    name: 'Limits',
    audioTracks: [
      { id: 'intro', name: 'Intro', type: 'bgm', url: 'intro.ogg', maxDuration: 4 },
      { id: 'theme', name: 'Theme', type: 'bgm', url: 'theme.ogg', loop: true },
      { id: 'sting', name: 'Sting', type: 'sfx', url: 'sting.ogg', maxDuration: 3 },
      { id: 'rain', name: 'Rain', type: 'ambient', url: 'rain.ogg', loop: true, maxDuration: 5, fadeOut: 1 },
      { id: 'door', name: 'Door', type: 'sfx', url: 'door.ogg', maxDuration: 2 },
      { id: 'bell', name: 'Bell', type: 'sfx', url: 'bell.ogg', maxDuration: 2 },
    ],
    bgmPlaylist: { tracks: ['intro', 'theme'], playMode: 'sequential', gapSeconds: 1 },
    rules: [{ id: 'rain-starts', name: 'Rain starts', trigger: { type: 'keyword', keywords: ['rain'] }, actions: [{ type: 'play-audio', trackId: 'rain', action: 'play' }] }],
    reactions: [{ id: 'door-opens', name: 'Door opens', when: { eventType: 'spatial:zone-enter', zone: 'hall' }, then: [{ type: 'set', path: '@audio.sfx', value: 'door' }] }],
  });
  const options = { now: new Date('2026-01-01T00:00:00Z'), seed: 1, sessionId: 'limits' };

  function director() {
    const media: (FakeMedia & { track: string })[] = [];
    const env: AudioEnvironment = {
      createMedia: () => {
        const m = Object.assign(new FakeMedia(), { track: '' });
        media.push(m);
        return m;
      },
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    };
    const d = new AudioDirector(world.audioTracks, (u) => u, env);
    const playing = () => d.state.map((p) => p.trackId).sort();
    const sounding = (src: string) => media.filter((m) => m.src === src && m.playing).length;
    return { d, media, playing, sounding };
  }

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a playlist track stops at its limit and the playlist moves on after its gap', () => {
    const { d, playing, sounding } = director();
    const start = startSession(world, options);
    d.apply(start.audioCommands);
    expect(playing()).toEqual(['intro']);
    vi.advanceTimersByTime(3_999);
    expect(sounding('intro.ogg')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(sounding('intro.ogg')).toBe(0);
    expect(playing()).toEqual([]);
    vi.advanceTimersByTime(1_000); // the playlist's gap
    expect(playing()).toEqual(['theme']);
    vi.advanceTimersByTime(60_000); // no limit of its own: it keeps playing
    expect(playing()).toEqual(['theme']);
  });

  it('a directive, a rule and a reaction each start a track that stops by itself; a fadeOut ends at the limit', () => {
    const { d, media, playing, sounding } = director();
    const start = startSession(world, { ...options, sessionId: 'directives' });
    const turn = runTurn(world, start.state, { ...options, userMessage: 'Is that rain?', aiReply: 'A chord rings out. [audio: sting play]' });
    expect(turn.audioCommands.map((c) => [c.action, 'trackId' in c ? c.trackId : '', c.source])).toEqual(
      expect.arrayContaining([
        ['play', 'sting', 'directive'],
        ['play', 'rain', 'rule:rain-starts'],
      ]),
    );
    d.apply(turn.audioCommands.filter((c) => c.action === 'play'));
    expect(playing()).toEqual(['rain', 'sting']);
    const rain = media.find((m) => m.src === 'rain.ogg')!;
    expect(rain.loop).toBe(true);
    vi.advanceTimersByTime(3_000);
    expect(playing()).toEqual(['rain']); // the directive's sting: 3 s
    expect(sounding('sting.ogg')).toBe(0);
    vi.advanceTimersByTime(1_000); // 4 s: the rain's 1 s fade-out starts now …
    expect(sounding('rain.ogg')).toBe(1);
    vi.advanceTimersByTime(500);
    expect(rain.volume).toBeGreaterThan(0);
    expect(rain.volume).toBeLessThan(1);
    vi.advanceTimersByTime(500); // … and ends at its 5 s limit, though it loops
    expect(sounding('rain.ogg')).toBe(0);
    expect(rain.volume).toBe(0);

    const event = dispatchEvents(world, turn.state, [{ type: 'spatial:zone-enter', zone: 'hall' }], options);
    expect(event.audioCommands.map((c) => [c.action, 'trackId' in c ? c.trackId : '', c.source])).toEqual([['play', 'door', 'reaction:door-opens']]);
    d.apply(event.audioCommands);
    vi.advanceTimersByTime(1_999);
    expect(sounding('door.ogg')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(sounding('door.ogg')).toBe(0);
    expect(playing()).toEqual([]);
  });

  it('a chained track follows at the limit; an explicit stop cancels the limit and the chain; the interface option overrides the limit', () => {
    const { d, playing, sounding } = director();
    d.apply([{ action: 'play', trackId: 'intro', trackType: 'bgm', chainTo: 'theme' }]);
    vi.advanceTimersByTime(4_000);
    expect(playing()).toEqual(['theme']);
    d.apply([{ action: 'stop', trackId: 'theme' }]);

    d.apply([{ action: 'play', trackId: 'intro', trackType: 'bgm', chainTo: 'theme' }]);
    vi.advanceTimersByTime(1_000);
    d.apply([{ action: 'stop', trackId: 'intro' }]);
    vi.advanceTimersByTime(10_000);
    expect(playing()).toEqual([]);

    d.apply([{ action: 'play', trackId: 'bell', trackType: 'sfx', maxDurationSeconds: 0.5 }]);
    vi.advanceTimersByTime(500);
    expect(sounding('bell.ogg')).toBe(0);
    // A sound played again while it still sounds: each copy stops at its own limit.
    d.apply([{ action: 'play', trackId: 'bell', trackType: 'sfx' }]);
    vi.advanceTimersByTime(1_000);
    d.apply([{ action: 'play', trackId: 'bell', trackType: 'sfx' }]);
    expect(sounding('bell.ogg')).toBe(2);
    vi.advanceTimersByTime(1_000);
    expect(sounding('bell.ogg')).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(sounding('bell.ogg')).toBe(0);
    expect(playing()).toEqual([]);
  });
});
