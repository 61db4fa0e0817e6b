import { type MacroContext, type Persona, resolveUserName } from './macros.ts';
import { createRandom } from './random.ts';
import type { WorldState } from './state.ts';
import type { EngineWorld } from './world-types.ts';

/** What both runTurn and assemblePrompt need to know about the session. */
export interface SessionOptions {
  /** The injected clock: the engine never reads the system time. */
  now: Date | string | number;
  /** World/session seed for random, pick, roll and playlist shuffle. */
  seed?: string | number;
  sessionId?: string;
  persona?: Persona | null;
  /** The account's username (second choice for `{{user}}`). */
  accountName?: string | null;
  /** `{{char}}`; defaults to the world's name. */
  charName?: string;
  /** IANA time zone for the time macros; default UTC. */
  timeZone?: string;
  model?: string;
  /**
   * The players of a room (docs/ROOMS.md), when several play the session: each with the name their
   * messages carry and their persona. The prompt then describes every player (step 2) and lists
   * each one's per-player values (step 12); `{{user}}` is the newest speaker (`persona` and
   * `accountName`).
   */
  party?: readonly PartyMember[];
}

/** One player of a room, as the prompt knows them. */
export interface PartyMember {
  /** The account id (the key of their per-player values). */
  id: string;
  name: string;
  persona: Persona | null;
}

export function toDate(now: Date | string | number): Date {
  const date = now instanceof Date ? now : new Date(now);
  if (Number.isNaN(date.getTime())) throw new RangeError(`invalid time: ${String(now)}`);
  return date;
}

export function sessionSeedOf(options: SessionOptions): string {
  return `${options.seed ?? 0}|${options.sessionId ?? ''}`;
}

export interface RecentMessages {
  lastMessage: string;
  lastUserMessage: string;
  lastCharMessage: string;
}

export function buildMacroContext(world: EngineWorld, state: WorldState, options: SessionOptions, turn: number, recent: RecentMessages): MacroContext {
  const seed = `${sessionSeedOf(options)}|${turn}`;
  return {
    charName: options.charName ?? world.name,
    userName: resolveUserName(options.persona, options.accountName, world.settings?.playerName),
    persona: options.persona ?? null,
    now: toDate(options.now),
    timeZone: options.timeZone ?? 'UTC',
    lastUserMessageAt: state.lastUserMessageAt,
    turnCount: state.turnCount,
    model: options.model ?? '',
    ...recent,
    variables: state.variables,
    variableIds: new Set(world.variables.map((variable) => variable.id)),
    random: createRandom(`${seed}|random`),
    pickSeed: seed,
  };
}
