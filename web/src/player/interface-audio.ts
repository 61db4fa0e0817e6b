/**
 * The sandbox's audio members on top of the player's AudioDirector: playAudio with `maxDuration`
 * (auto-stop, overriding the track's own for this play) and `duckBgm` (music lowered while the sound plays), stopAudio of one track or all.
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
  timers: { setInterval(fn: () => void, ms: number): unknown; clearInterval(h: unknown): void } = window,
): void {
  // maxDuration is the director's, like a track's own: it stops the sound and lets a chain follow.
  const maxDurationSeconds = options.maxDuration && options.maxDuration > 0 ? options.maxDuration : undefined;
  director.apply([{ action: 'play', trackId, trackType, volume: options.volume, fadeInSeconds: options.fadeDuration, chainTo: options.chainTo, maxDurationSeconds }]);
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
