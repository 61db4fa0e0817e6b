/**
 * The sandbox's audio members on top of the player's AudioDirector: playAudio with `maxDuration`
 * (auto-stop) and `duckBgm` (music lowered while the sound plays), stopAudio of one track or all.
 */
import type { AudioDirector } from './audio.ts';

export interface PlayOptions {
  volume?: number;
  fadeDuration?: number;
  chainTo?: string;
  maxDuration?: number;
  duckBgm?: boolean;
}

/** How far the music drops while a ducking sound plays. */
export const DUCK_LEVEL = 0.3;

export function playInterfaceAudio(
  director: AudioDirector,
  trackType: 'bgm' | 'sfx' | 'ambient',
  trackId: string,
  options: PlayOptions,
  /** The player's music level, restored when the ducking sound ends (at the latest after 30 s). */
  bgmLevel: number,
  timers: { setTimeout(fn: () => void, ms: number): unknown; setInterval(fn: () => void, ms: number): unknown; clearInterval(h: unknown): void } = window,
): void {
  director.apply([{ action: 'play', trackId, trackType, volume: options.volume, fadeInSeconds: options.fadeDuration, chainTo: options.chainTo }]);
  if (options.maxDuration && options.maxDuration > 0) {
    timers.setTimeout(() => director.apply([{ action: 'stop', trackId, fadeOutSeconds: 0 }]), options.maxDuration * 1000);
  }
  if (options.duckBgm && trackType !== 'bgm') {
    director.setChannelVolume('bgm', bgmLevel * DUCK_LEVEL);
    let waited = 0;
    const watch = timers.setInterval(() => {
      waited += 200;
      if (director.state.some((p) => p.trackId === trackId) && waited < 30_000) return;
      timers.clearInterval(watch);
      director.setChannelVolume('bgm', bgmLevel);
    }, 200);
  }
}

export function stopInterfaceAudio(director: AudioDirector, trackId: string | undefined, fadeDuration: number | undefined): void {
  if (!trackId) director.apply([{ action: 'playlist-stop', fadeOutSeconds: fadeDuration }]);
  const ids = trackId ? [trackId] : director.state.map((p) => p.trackId);
  director.apply(ids.map((id) => ({ action: 'stop' as const, trackId: id, fadeOutSeconds: fadeDuration })));
}
