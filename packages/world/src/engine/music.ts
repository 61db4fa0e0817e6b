import type { AudioCommand } from './audio-command.ts';
import { conditionsHold } from './conditions.ts';
import { matchesAnyKeyword, normalizeForMatch } from './keywords.ts';
import { createRandom, shuffled } from './random.ts';
import type { AudioState } from './state.ts';
import type { EngineConditionalBgm, EngineWorld } from './world-types.ts';

export const PLAYLIST_MARK = '@playlist';

/** The playlist's start command: order resolved here (seeded shuffle), sequencing by the player. */
export function playlistStart(world: EngineWorld, randomSeed: string, source: string): AudioCommand | null {
  const playlist = world.bgmPlaylist;
  if (!playlist || playlist.tracks.length === 0) return null;
  const trackIds = playlist.playMode === 'shuffle' ? shuffled(playlist.tracks, createRandom(`${randomSeed}|playlist`)) : [...playlist.tracks];
  return {
    action: 'playlist-start',
    trackIds,
    mode: playlist.playMode,
    repeat: playlist.playMode !== 'sequential',
    gapSeconds: Math.min(30, Math.max(0, playlist.gapSeconds ?? 0)),
    source,
  };
}

export interface MusicInput {
  turn: number;
  userMessage: string;
  aiReply: string;
  variables: Readonly<Record<string, unknown>>;
  /** World seed + session: the playlist shuffle is stable for a session. */
  sessionSeed: string;
  /** Whether this is session start (before any message) rather than a turn. */
  sessionStart?: boolean;
  /** Whether session-start triggers still have to fire (startSession did not run them). */
  sessionStartPending?: boolean;
  /** Between turns (interface events) only level-triggered (variable) music is re-evaluated. */
  levelOnly?: boolean;
}

function edgeFired(bgm: EngineConditionalBgm, input: MusicInput, userText: string, aiText: string): boolean {
  const wholeWords = bgm.matchWholeWords ?? false;
  switch (bgm.triggerType) {
    case 'keyword':
      return matchesAnyKeyword(userText, bgm.keywords, wholeWords);
    case 'ai-keyword':
      return matchesAnyKeyword(aiText, bgm.keywords, wholeWords);
    case 'turn-count': {
      const every = bgm.everyNTurns ?? 0;
      return bgm.atTurn === input.turn || (every > 0 && input.turn % every === 0);
    }
    case 'session-start':
      return input.sessionStart === true || input.sessionStartPending === true;
    default:
      return false;
  }
}

/**
 * Resolves playlist and conditional BGM after a turn. `variable` triggers are level-triggered
 * (active while their conditions hold); keyword, ai-keyword, turn-count and session-start
 * triggers are edge-triggered: they take over on the turn they fire and stay until another
 * conditional BGM wins or their own conditions turn false. The highest priority wins, a newly
 * fired trigger before a latched one at equal priority, then definition order. When the
 * conditional BGM in control loses and none replaces it, its track stops (with its fade-out)
 * and `fallback` plays: `default` the playlist, `previous` what played before, or a track id.
 */
export function resolveMusic(world: EngineWorld, audio: AudioState, input: MusicInput, alreadyIssued: readonly AudioCommand[]): AudioCommand[] {
  const commands: AudioCommand[] = [];
  const tracks = new Map((world.audioTracks ?? []).map((track) => [track.id, track]));
  for (const command of alreadyIssued) {
    if ((command.action === 'play' || command.action === 'crossfade') && command.trackType === 'bgm') audio.currentBgm = command.trackId;
    if (command.action === 'stop' && command.trackId === audio.currentBgm) audio.currentBgm = null;
  }
  const conditionals = world.conditionalBGM ?? [];
  const userText = normalizeForMatch(input.userMessage);
  const aiText = normalizeForMatch(input.aiReply);
  const candidates: { bgm: EngineConditionalBgm; index: number; fresh: boolean }[] = [];
  conditionals.forEach((bgm, index) => {
    if (!tracks.has(bgm.targetTrackId)) return;
    const hold = conditionsHold(bgm.conditions, bgm.conditionLogic, input.variables);
    if (bgm.triggerType === 'variable') {
      if (hold && (bgm.conditions?.length ?? 0) > 0) candidates.push({ bgm, index, fresh: false });
      return;
    }
    if (!hold) return;
    if (!input.levelOnly && edgeFired(bgm, input, userText, aiText)) candidates.push({ bgm, index, fresh: true });
    else if (audio.latchedConditionalId === bgm.id) candidates.push({ bgm, index, fresh: false });
  });
  candidates.sort(
    (left, right) => (right.bgm.priority ?? 0) - (left.bgm.priority ?? 0) || Number(right.fresh) - Number(left.fresh) || left.index - right.index,
  );
  const winner = candidates[0]?.bgm;
  const previousId = audio.activeConditionalId;
  const source = (id: string) => `conditional-bgm:${id}`;

  if (winner && winner.id !== previousId) {
    audio.latchedConditionalId = winner.triggerType === 'variable' ? null : winner.id;
    audio.bgmBeforeConditional = audio.currentBgm ?? (audio.playlistPlaying ? PLAYLIST_MARK : null);
    const target = winner.targetTrackId;
    const fadeOut = winner.fadeOutDuration ?? undefined;
    if (winner.stopPreviousBGM === true) {
      if (audio.playlistPlaying) {
        commands.push({ action: 'playlist-stop', ...(fadeOut ? { fadeOutSeconds: fadeOut } : {}), source: source(winner.id) });
        audio.playlistPlaying = false;
      }
      if (audio.currentBgm && audio.currentBgm !== target) {
        commands.push({ action: 'stop', trackId: audio.currentBgm, ...(fadeOut ? { fadeOutSeconds: fadeOut } : {}), source: source(winner.id) });
      }
    }
    if (audio.currentBgm !== target) {
      const track = tracks.get(target);
      const fadeIn = winner.fadeInDuration ?? track?.fadeIn ?? undefined;
      commands.push({
        action: 'play',
        trackId: target,
        trackType: track?.type ?? 'bgm',
        ...(track?.volume !== undefined ? { volume: track.volume } : {}),
        ...(fadeIn ? { fadeInSeconds: fadeIn } : {}),
        source: source(winner.id),
      });
      audio.currentBgm = target;
    }
    audio.activeConditionalId = winner.id;
  } else if (!winner && previousId !== null) {
    const previous = conditionals.find((bgm) => bgm.id === previousId);
    const target = previous?.targetTrackId;
    const fadeOut = previous?.fadeOutDuration ?? (target ? tracks.get(target)?.fadeOut : undefined) ?? undefined;
    if (target && audio.currentBgm === target) {
      commands.push({ action: 'stop', trackId: target, ...(fadeOut ? { fadeOutSeconds: fadeOut } : {}), source: source(previousId) });
      audio.currentBgm = null;
    }
    const fallback = previous?.fallback ?? 'default';
    const resume = fallback === 'default' ? PLAYLIST_MARK : fallback === 'previous' ? audio.bgmBeforeConditional : fallback;
    if (resume === PLAYLIST_MARK) {
      const start = playlistStart(world, input.sessionSeed, `fallback:${previousId}`);
      if (start && !audio.playlistPlaying) {
        commands.push(start);
        audio.playlistPlaying = true;
      }
    } else if (resume && tracks.has(resume) && audio.currentBgm !== resume) {
      const track = tracks.get(resume);
      commands.push({
        action: 'play',
        trackId: resume,
        trackType: track?.type ?? 'bgm',
        ...(track?.volume !== undefined ? { volume: track.volume } : {}),
        ...(track?.fadeIn ? { fadeInSeconds: track.fadeIn } : {}),
        source: `fallback:${previousId}`,
      });
      audio.currentBgm = resume;
    }
    audio.activeConditionalId = null;
    audio.latchedConditionalId = null;
    audio.bgmBeforeConditional = null;
  }

  const playlist = world.bgmPlaylist;
  if (
    playlist &&
    playlist.autoPlay !== false &&
    !audio.playlistPlaying &&
    audio.currentBgm === null &&
    audio.activeConditionalId === null &&
    (!input.sessionStart || !playlist.waitForFirstMessage)
  ) {
    const start = playlistStart(world, input.sessionSeed, 'playlist');
    if (start) {
      commands.push(start);
      audio.playlistPlaying = true;
    }
  }
  return commands;
}
