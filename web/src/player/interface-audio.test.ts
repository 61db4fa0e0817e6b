import { describe, expect, it } from 'vitest';
import { AudioDirector, type AudioEnvironment, type MediaLike } from './audio.ts';
import { DUCK_LEVEL, playInterfaceAudio, stopInterfaceAudio } from './interface-audio.ts';

class FakeMedia implements MediaLike {
  src = '';
  loop = false;
  volume = 1;
  #ended: (() => void)[] = [];
  play() {}
  pause() {}
  addEventListener(_type: 'ended', listener: () => void) {
    this.#ended.push(listener);
  }
  end() {
    for (const l of this.#ended) l();
  }
}

/** A manual clock for the director and for the interface's timers. */
function setup() {
  const media: FakeMedia[] = [];
  let now = 0;
  let timers: { at: number; fn: () => void; id: number; every?: number }[] = [];
  let next = 1;
  const add = (fn: () => void, ms: number, every?: number) => {
    const id = next++;
    timers.push({ at: now + ms, fn, id, every });
    return id;
  };
  const clear = (id: unknown) => {
    timers = timers.filter((t) => t.id !== id);
  };
  const env: AudioEnvironment = {
    createMedia: () => {
      const m = new FakeMedia();
      media.push(m);
      return m;
    },
    setTimeout: (fn, ms) => add(fn, ms),
    clearTimeout: clear,
  };
  const timersApi = { setTimeout: (fn: () => void, ms: number) => add(fn, ms), setInterval: (fn: () => void, ms: number) => add(fn, ms, ms), clearInterval: clear };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      const due = timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      now = due.at;
      if (due.every) due.at += due.every;
      else timers = timers.filter((t) => t !== due);
      due.fn();
    }
    now = until;
  };
  const director = new AudioDirector(
    [
      { id: 'theme', type: 'bgm', url: 'theme.ogg', volume: 1 },
      { id: 'chime', type: 'sfx', url: 'chime.ogg', volume: 1 },
    ],
    (u) => u,
    env,
  );
  return { director, media, advance, timersApi };
}

describe('the interface audio members', () => {
  it('playAudio with maxDuration stops the sound by itself', () => {
    const { director, advance, timersApi } = setup();
    playInterfaceAudio(director, 'sfx', 'chime', { maxDuration: 2 }, 1, timersApi);
    expect(director.state.map((p) => p.trackId)).toEqual(['chime']);
    advance(1900);
    expect(director.state.map((p) => p.trackId)).toEqual(['chime']);
    advance(200);
    expect(director.state).toEqual([]);
  });

  it('duckBgm lowers the music while the sound plays and restores it after', () => {
    const { director, media, advance, timersApi } = setup();
    director.apply([{ action: 'play', trackId: 'theme', trackType: 'bgm' }]);
    const theme = media[0]!;
    expect(theme.volume).toBe(1);
    playInterfaceAudio(director, 'sfx', 'chime', { duckBgm: true }, 1, timersApi);
    expect(theme.volume).toBeCloseTo(DUCK_LEVEL);
    advance(1000);
    expect(theme.volume).toBeCloseTo(DUCK_LEVEL);
    media[1]!.end();
    advance(250);
    expect(theme.volume).toBe(1);
  });

  it('stopAudio without a track stops everything, the playlist included', () => {
    const { director } = setup();
    director.apply([{ action: 'playlist-start', trackIds: ['theme'], mode: 'loop', repeat: true, gapSeconds: 0 }]);
    director.apply([{ action: 'play', trackId: 'chime', trackType: 'sfx' }]);
    stopInterfaceAudio(director, undefined, 0);
    expect(director.state).toEqual([]);
  });
});
