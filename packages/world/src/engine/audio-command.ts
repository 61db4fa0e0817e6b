/** What the player page should do with its audio after a turn. */
export type AudioCommand =
  | {
      action: 'play';
      trackId: string;
      trackType: 'bgm' | 'sfx' | 'ambient';
      volume?: number;
      fadeInSeconds?: number;
      chainTo?: string;
      source: string;
    }
  | { action: 'stop'; trackId: string; fadeOutSeconds?: number; source: string }
  | { action: 'crossfade'; trackId: string; trackType: 'bgm' | 'sfx' | 'ambient'; seconds: number; source: string }
  | { action: 'volume'; trackId: string; volume: number; source: string }
  | {
      action: 'playlist-start';
      /** The order to play (already shuffled with the session seed for `shuffle`). */
      trackIds: string[];
      mode: 'loop' | 'shuffle' | 'sequential';
      /** True for loop and shuffle: start again after the last track. */
      repeat: boolean;
      gapSeconds: number;
      source: string;
    }
  | { action: 'playlist-stop'; fadeOutSeconds?: number; source: string };
