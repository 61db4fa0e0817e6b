import type { EngineWorld } from './world-types.ts';

/**
 * Step 3, the static format block: how to write directives, each variable with its
 * behaviorRules, and the audio tracks. It holds no current values so it stays cacheable.
 */
export function staticFormatBlock(world: EngineWorld): string {
  // a function of the world alone (worlds are never changed in place), made once per world object
  let block = staticBlocks.get(world);
  if (block === undefined) {
    block = buildStaticFormatBlock(world);
    staticBlocks.set(world, block);
  }
  return block;
}

const staticBlocks = new WeakMap<EngineWorld, string>();

function buildStaticFormatBlock(world: EngineWorld): string {
  const parts: string[] = [];
  if (world.variables.length > 0) {
    const lines = [
      '## Game variables',
      'When the story changes a variable, write a directive in your reply: [variable-id: operation value].',
      'Numbers: [id: +n], [id: -n], [id: *n], [id: set n]. Booleans: [id: toggle], [id: set true]. Text: [id: set text], [id: append text].',
      'JSON: [id: set {...}], [id: merge {...}], [id: push item], [id: delete key-or-index]; fields by dot path: [id.path.to.field: set value].',
    ];
    for (const variable of world.variables) {
      const bounds =
        variable.type === 'number' && (typeof variable.min === 'number' || typeof variable.max === 'number')
          ? `, ${typeof variable.min === 'number' ? variable.min : '-∞'} to ${typeof variable.max === 'number' ? variable.max : '∞'}`
          : '';
      const name = variable.name && variable.name !== variable.id ? ` "${variable.name}"` : '';
      const description = variable.description ? `: ${variable.description}` : '';
      lines.push(`- ${variable.id}${name} (${variable.type}${bounds})${description}`);
      if (variable.behaviorRules?.trim()) lines.push(`  Behavior: ${variable.behaviorRules.trim()}`);
    }
    parts.push(lines.join('\n'));
  }
  const tracks = world.audioTracks ?? [];
  if (tracks.length > 0) {
    const lines = [
      '## Audio',
      'Control audio with [audio: track-id play], [audio: track-id stop], [audio: track-id crossfade seconds], [audio: track-id volume 0-1], [audio: track-id play chain:next-track-id].',
    ];
    for (const track of tracks) lines.push(`- ${track.id} (${track.type})${track.name ? `: ${track.name}` : ''}`);
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * Step 12, the dynamic format block: every variable's current value, and in a room each player's
 * own values (per-player variables) under their name.
 */
export function dynamicFormatBlock(
  world: EngineWorld,
  variables: Readonly<Record<string, unknown>>,
  players?: readonly { name: string; values: Readonly<Record<string, unknown>> }[],
): string {
  if (world.variables.length === 0) return '';
  const lines = ['## Current state'];
  for (const variable of world.variables) lines.push(`- ${variable.id}: ${show(variables[variable.id])}`);
  for (const player of players ?? []) {
    const own = world.variables.filter((variable) => Object.hasOwn(player.values, variable.id));
    if (own.length === 0) continue;
    lines.push(`### ${player.name}`);
    for (const variable of own) lines.push(`- ${variable.id}: ${show(player.values[variable.id])}`);
  }
  return lines.join('\n');
}

/**
 * A room's dynamic block (dynamicFormatBlock with players) as one player may see it: the shared
 * values and that player's own section, the other players' sections left out.
 */
export function dynamicBlockForPlayer(block: string, name: string | null): string {
  const out: string[] = [];
  let keep = true;
  for (const line of block.split('\n')) {
    if (line.startsWith('### ')) keep = line === `### ${name}`;
    if (keep) out.push(line);
  }
  return out.join('\n');
}
