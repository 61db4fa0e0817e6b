import type { CardMode } from '@yumina/conversations';
import type { WorldDefinition } from '@yumina/world';

/**
 * The world one reply of a group scene is written with (docs/GROUPS.md): the scene's world (its
 * variables, rules, reactions, settings and interface: the shared state), with the speaker's card
 * (description, personality, scenario, example dialogue, lore; `{{char}}` is the speaker) and, in
 * the 'join' card mode, the other characters' descriptions and personalities, their `{{char}}`
 * written out as their own names. When the scene's world is one of the characters' own, its card
 * and lore are that character's, and only that character's replies read them.
 */

type Entry = WorldDefinition['entries'][number];
/** What a character's card is made of in its world (greetings open the scene and are not sent again). */
const JOINED_ROLES = new Set<Entry['role']>(['character', 'personality']);

export interface SceneCharacter {
  participantId: string;
  name: string;
  world: WorldDefinition;
  /** The scene's world is this character's own. */
  isScene: boolean;
}

/**
 * The worlds made for speakers, by scene world: made once per speaker, card mode and cast while
 * the worlds are the same objects (the parsed definitions are cached per process,
 * containers/api/src/worlds/version.ts), so that what the engine keeps per world object (its static
 * format block) is kept from reply to reply, as for a single character's world.
 */
const made = new WeakMap<WorldDefinition, Map<string, { worlds: readonly WorldDefinition[]; world: WorldDefinition }>>();

export function speakerWorld(scene: WorldDefinition, speaker: SceneCharacter, others: readonly SceneCharacter[], mode: CardMode): WorldDefinition {
  const key = JSON.stringify([mode, [speaker, ...others].map((c) => [c.participantId, c.name, c.isScene])]);
  const worlds = [speaker.world, ...others.map((o) => o.world)];
  let perScene = made.get(scene);
  const hit = perScene?.get(key);
  if (hit && hit.worlds.length === worlds.length && hit.worlds.every((w, i) => w === worlds[i])) return hit.world;
  const world = buildSpeakerWorld(scene, speaker, others, mode);
  if (!perScene) made.set(scene, (perScene = new Map()));
  // a scene's casts are few (2-8 speakers, two card modes); a changed cast replaces its entries
  if (perScene.size >= 32) perScene.clear();
  perScene.set(key, { worlds, world });
  return world;
}

function buildSpeakerWorld(scene: WorldDefinition, speaker: SceneCharacter, others: readonly SceneCharacter[], mode: CardMode): WorldDefinition {
  const sceneIsCharacter = speaker.isScene || others.some((o) => o.isScene);
  const shared: Entry[] = sceneIsCharacter ? [] : scene.entries.filter((e) => e.role !== 'greeting').map((e) => ({ ...e, id: `scene:${e.id}` }));
  const own = speaker.world.entries.filter((e) => e.role !== 'greeting');
  const joined: Entry[] =
    mode === 'join'
      ? others.flatMap((o) =>
          o.world.entries
            .filter((e) => JOINED_ROLES.has(e.role) && e.enabled !== false)
            .map((e) => ({
              ...e,
              id: `${o.participantId}:${e.id}`,
              name: `${o.name}: ${e.name}`,
              content: `[${o.name}] ${e.content.replace(/\{\{char\}\}/gi, o.name)}`,
              keywords: [],
              secondaryKeywords: [],
              conditions: [],
            })),
        )
      : [];
  return { ...scene, name: speaker.name, entries: [...shared, ...own, ...joined] };
}

/** A card's talkativeness (SillyTavern's `extensions.talkativeness`, "0.5" or 0.5), 0.5 when it has none. */
export function talkativenessOf(cardSource: string | null): number {
  const card = parsedCard(cardSource);
  const extensions = card?.data && typeof card.data === 'object' ? (card.data as Record<string, unknown>).extensions : undefined;
  const value = extensions && typeof extensions === 'object' ? Number((extensions as Record<string, unknown>).talkativeness) : NaN;
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0.5;
}

/** The greeting a character opens a group scene with: the card's first group-only greeting (V3), else its world's greeting. */
export function groupGreetingOf(world: WorldDefinition, cardSource: string | null): string | null {
  const card = parsedCard(cardSource);
  const data = card?.data && typeof card.data === 'object' ? (card.data as Record<string, unknown>) : null;
  const groupOnly = Array.isArray(data?.group_only_greetings) ? data.group_only_greetings.find((g): g is string => typeof g === 'string' && g.trim() !== '') : undefined;
  if (groupOnly) return groupOnly;
  const greeting = world.entries.filter((e) => e.role === 'greeting' && e.enabled !== false).sort((a, b) => a.position - b.position)[0];
  return greeting?.content.trim() ? greeting.content : null;
}

function parsedCard(cardSource: string | null): Record<string, unknown> | null {
  if (!cardSource) return null;
  try {
    const source = JSON.parse(cardSource) as { card?: unknown };
    return source.card && typeof source.card === 'object' ? (source.card as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
