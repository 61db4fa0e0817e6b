import { describe, expect, it } from 'vitest';
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
