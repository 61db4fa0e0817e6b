/**
 * Plays the world engine's audio commands in the player page: BGM, ambient and SFX tracks with
 * fades, crossfades, per-track volume, playlists with gaps, and separate BGM / SFX volume levels.
 * The media element and the clock are injected so the logic runs (and is tested) outside a browser.
 */

export interface AudioTrackDef {
  id: string;
  name?: string;
  type: 'bgm' | 'sfx' | 'ambient';
  url: string;
  loop?: boolean;
  volume?: number;
  fadeIn?: number | null;
  fadeOut?: number | null;
  /** Seconds after which the track stops by itself, however it was started (seed 002 §2.10); null: no limit. */
  maxDuration?: number | null;
}

export type AudioCommand =
  | {
      action: 'play';
      trackId: string;
      trackType: 'bgm' | 'sfx' | 'ambient';
      volume?: number;
      fadeInSeconds?: number;
      chainTo?: string;
      /** Overrides the track's own maxDuration for this play (the interface's playAudio option). */
      maxDurationSeconds?: number;
    }
  | { action: 'stop'; trackId: string; fadeOutSeconds?: number }
  | { action: 'crossfade'; trackId: string; trackType: 'bgm' | 'sfx' | 'ambient'; seconds: number }
  | { action: 'volume'; trackId: string; volume: number }
  | { action: 'playlist-start'; trackIds: string[]; mode: string; repeat: boolean; gapSeconds: number }
  | { action: 'playlist-stop'; fadeOutSeconds?: number };

/** The slice of HTMLAudioElement the director uses. */
export interface MediaLike {
  src: string;
  loop: boolean;
  volume: number;
  play(): Promise<void> | void;
  pause(): void;
  addEventListener(type: 'ended', listener: () => void): void;
}

export interface AudioEnvironment {
  createMedia(): MediaLike;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

interface Playing {
  trackId: string;
  kind: 'bgm' | 'sfx' | 'ambient';
  media: MediaLike;
  /** The track's own level before the channel volume. */
  level: number;
  fade: unknown;
  /** The maxDuration timer. */
  limit: unknown;
  /** What follows the track's end (a chained track, the playlist's next): run once, on a natural end or at maxDuration. */
  after: () => void;
  finished: boolean;
}

interface PlayOptions {
  volume?: number;
  fadeIn?: number;
  chainTo?: string;
  onEnded?: () => void;
  maxDuration?: number;
}

const FADE_STEP_MS = 50;
const clamp = (v: number) => Math.max(0, Math.min(1, v));

export class AudioDirector {
  #playing = new Map<string, Playing>();
  #channels = { bgm: 1, sfx: 1 };
  #playlist: { ids: string[]; index: number; repeat: boolean; gap: number; timer: unknown } | null = null;

  constructor(
    private readonly tracks: readonly AudioTrackDef[],
    private readonly resolveUrl: (url: string) => string,
    private readonly env: AudioEnvironment,
  ) {}

  /** What is playing now, for the page and for tests. */
  get state(): { trackId: string; kind: string; src: string; volume: number }[] {
    return [...this.#playing.values()].map((p) => ({ trackId: p.trackId, kind: p.kind, src: p.media.src, volume: Math.round(p.media.volume * 1000) / 1000 }));
  }

  setChannelVolume(channel: 'bgm' | 'sfx', volume: number): void {
    this.#channels[channel] = clamp(volume);
    for (const p of this.#playing.values()) p.media.volume = this.#effective(p.kind, p.level);
  }

  apply(commands: readonly AudioCommand[]): void {
    for (const c of commands) {
      switch (c.action) {
        case 'play':
          this.#play(c.trackId, { volume: c.volume, fadeIn: c.fadeInSeconds, chainTo: c.chainTo, maxDuration: c.maxDurationSeconds });
          break;
        case 'stop':
          this.#stop(c.trackId, c.fadeOutSeconds);
          break;
        case 'crossfade': {
          const kind = this.#track(c.trackId)?.type ?? c.trackType;
          for (const p of [...this.#playing.values()]) if (p.kind === kind && p.trackId !== c.trackId) this.#stop(p.trackId, c.seconds);
          this.#play(c.trackId, { fadeIn: c.seconds });
          break;
        }
        case 'volume': {
          const p = this.#playing.get(c.trackId);
          if (p) {
            p.level = clamp(c.volume);
            p.media.volume = this.#effective(p.kind, p.level);
          }
          break;
        }
        case 'playlist-start':
          this.#stopPlaylist(0);
          this.#playlist = { ids: c.trackIds.filter((id) => this.#track(id)), index: 0, repeat: c.repeat, gap: c.gapSeconds, timer: null };
          this.#nextInPlaylist();
          break;
        case 'playlist-stop':
          this.#stopPlaylist(c.fadeOutSeconds ?? 0);
          break;
      }
    }
  }

  /** Stops everything at once (leaving the page). */
  dispose(): void {
    this.#stopPlaylist(0);
    for (const id of [...this.#playing.keys()]) this.#stop(id, 0);
  }

  #track(id: string): AudioTrackDef | undefined {
    return this.tracks.find((t) => t.id === id);
  }

  #effective(kind: 'bgm' | 'sfx' | 'ambient', level: number): number {
    return clamp(level * (kind === 'sfx' ? this.#channels.sfx : this.#channels.bgm));
  }

  #play(trackId: string, options: PlayOptions = {}): void {
    const { volume, fadeIn, chainTo, onEnded } = options;
    const track = this.#track(trackId);
    if (!track) return;
    const existing = this.#playing.get(trackId);
    if (existing && track.type !== 'sfx') {
      // Already playing: keep it going; a limit given with this play applies from now.
      if (options.maxDuration !== undefined) this.#limit(existing, options.maxDuration);
      return;
    }
    const media = this.env.createMedia();
    media.src = this.resolveUrl(track.url);
    media.loop = track.type !== 'sfx' && !chainTo && !onEnded && (track.loop ?? track.type === 'bgm');
    const after = () => {
      if (chainTo) this.#play(chainTo);
      onEnded?.();
    };
    const playing: Playing = { trackId, kind: track.type, media, level: clamp(volume ?? track.volume ?? 1), fade: null, limit: null, after, finished: false };
    const fadeSeconds = fadeIn ?? track.fadeIn ?? 0;
    media.volume = fadeSeconds > 0 ? 0 : this.#effective(playing.kind, playing.level);
    media.addEventListener('ended', () => {
      if (this.#playing.get(trackId) === playing) this.#playing.delete(trackId);
      this.#finish(playing);
    });
    this.#playing.set(trackId, playing);
    void Promise.resolve(media.play()).catch(() => {
      // Autoplay refused until the player interacts with the page; the next command retries.
    });
    if (fadeSeconds > 0) this.#fade(playing, this.#effective(playing.kind, playing.level), fadeSeconds);
    this.#limit(playing, options.maxDuration ?? track.maxDuration ?? undefined);
  }

  /**
   * maxDuration: the track is heard for at most `seconds`. With a fadeOut the fade starts early
   * enough to end at the limit. Then it counts as ended: a chained track or the playlist's next
   * one follows, as after a natural end.
   */
  #limit(playing: Playing, seconds: number | undefined): void {
    if (seconds === undefined || !(seconds > 0)) return;
    this.env.clearTimeout(playing.limit);
    const fadeOut = Math.min(this.#track(playing.trackId)?.fadeOut ?? 0, seconds);
    playing.limit = this.env.setTimeout(() => {
      playing.limit = null;
      if (this.#playing.get(playing.trackId) === playing) this.#playing.delete(playing.trackId);
      const end = () => {
        playing.media.pause();
        this.#finish(playing);
      };
      if (fadeOut > 0) this.#fade(playing, 0, fadeOut, end);
      else {
        this.env.clearTimeout(playing.fade);
        end();
      }
    }, (seconds - fadeOut) * 1000);
  }

  /** The track ended (naturally or at its limit): what follows it runs once. */
  #finish(playing: Playing): void {
    this.env.clearTimeout(playing.limit);
    if (playing.finished) return;
    playing.finished = true;
    playing.after();
  }

  #stop(trackId: string, fadeOut?: number): void {
    const playing = this.#playing.get(trackId);
    if (!playing) return;
    this.#playing.delete(trackId);
    // Stopped on purpose: nothing follows it.
    playing.finished = true;
    this.env.clearTimeout(playing.limit);
    const seconds = fadeOut ?? this.#track(trackId)?.fadeOut ?? 0;
    if (seconds <= 0) {
      this.env.clearTimeout(playing.fade);
      playing.media.pause();
      return;
    }
    this.#fade(playing, 0, seconds, () => playing.media.pause());
  }

  #fade(playing: Playing, to: number, seconds: number, done?: () => void): void {
    this.env.clearTimeout(playing.fade);
    const steps = Math.max(1, Math.round((seconds * 1000) / FADE_STEP_MS));
    const from = playing.media.volume;
    let step = 0;
    const tick = () => {
      step += 1;
      playing.media.volume = clamp(from + ((to - from) * step) / steps);
      if (step < steps) playing.fade = this.env.setTimeout(tick, FADE_STEP_MS);
      else done?.();
    };
    playing.fade = this.env.setTimeout(tick, FADE_STEP_MS);
  }

  #nextInPlaylist(): void {
    const list = this.#playlist;
    if (!list || list.ids.length === 0) return;
    if (list.index >= list.ids.length) {
      if (!list.repeat) {
        this.#playlist = null;
        return;
      }
      list.index = 0;
    }
    const id = list.ids[list.index++]!;
    this.#play(id, {
      onEnded: () => {
        if (this.#playlist !== list) return;
        list.timer = this.env.setTimeout(() => this.#nextInPlaylist(), list.gap * 1000);
      },
    });
  }

  #stopPlaylist(fadeOut: number): void {
    const list = this.#playlist;
    if (!list) return;
    this.#playlist = null;
    this.env.clearTimeout(list.timer);
    for (const id of list.ids) this.#stop(id, fadeOut);
  }
}

/** The browser's media and timers. */
export const browserAudio: AudioEnvironment = {
  createMedia: () => new Audio(),
  setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  clearTimeout: (h) => window.clearTimeout(h as number),
};
