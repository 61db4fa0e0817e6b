import { formatIssuePath } from './issue-path.ts';
import type { ValidationWarning } from './validate-world.ts';
import type { WorldDefinition } from './world-schema.ts';

/**
 * Author hints for a valid world that validation does not report (the CLI's `validate` prints
 * them with the validation warnings): variables nothing reads, audio tracks nothing plays,
 * directives that are removed but never injected (orphaned references), and a variable named
 * `choices` (it shadows the choices directive).
 */
export function lintWorld(world: WorldDefinition): ValidationWarning[] {
  const warnings: ValidationWarning[] = [];
  const texts: string[] = [];
  const readIds = new Set<string>();
  const root = (reference: string) => reference.split(/[.[]/, 1)[0] ?? reference;
  const conditions = (list: readonly { variableId: string }[] | undefined) => {
    for (const condition of list ?? []) readIds.add(root(condition.variableId));
  };
  for (const entry of world.entries) {
    texts.push(entry.content);
    conditions(entry.conditions);
  }
  for (const variable of world.variables) texts.push(variable.behaviorRules, variable.description);
  const injected = new Set<string>();
  const removed: { id: string; path: (string | number)[] }[] = [];
  const played = new Set<string>(world.bgmPlaylist?.tracks ?? []);
  world.rules.forEach((rule, ruleIndex) => {
    conditions(rule.conditions);
    const trigger = rule.trigger as { variableId?: string | null };
    if (trigger.variableId) readIds.add(trigger.variableId);
    rule.actions.forEach((action, actionIndex) => {
      if (action.type === 'modify-variable') readIds.add(root(action.variableId));
      if (action.type === 'inject-directive') {
        injected.add(action.directiveId);
        texts.push(action.content);
      }
      if (action.type === 'remove-directive') removed.push({ id: action.directiveId, path: ['rules', ruleIndex, 'actions', actionIndex, 'directiveId'] });
      if (action.type === 'play-audio') played.add(action.trackId);
      if (action.type === 'notify-player' || action.type === 'send-context') texts.push(action.message);
    });
  });
  (world.reactions ?? []).forEach((reaction, reactionIndex) => {
    conditions(reaction.conditions);
    texts.push(JSON.stringify(reaction.when));
    reaction.then.forEach((effect, effectIndex) => {
      if (effect.type !== 'set') return;
      if (!effect.path.startsWith('@')) readIds.add(root(effect.path));
      else if (effect.path.startsWith('@prompt.directive.')) {
        const id = effect.path.slice('@prompt.directive.'.length);
        if (effect.value === null || effect.value === false || effect.value === '') removed.push({ id, path: ['reactions', reactionIndex, 'then', effectIndex, 'path'] });
        else injected.add(id);
      } else if (effect.path.startsWith('@audio.')) {
        const value = effect.value as { trackId?: unknown } | string | undefined;
        played.add(typeof value === 'string' ? value : String(value?.trackId ?? ''));
      }
      texts.push(JSON.stringify(effect.value ?? ''));
    });
  });
  for (const bgm of world.conditionalBGM) {
    conditions(bgm.conditions);
    played.add(bgm.targetTrackId);
    if (bgm.fallback !== 'default' && bgm.fallback !== 'previous') played.add(bgm.fallback);
  }
  if (world.rootComponent) texts.push(...Object.values(world.rootComponent.files));
  texts.push(JSON.stringify(world.customUI), JSON.stringify(world.components));
  const corpus = texts.join('\n');
  world.variables.forEach((variable, index) => {
    if (readIds.has(variable.id) || corpus.includes(variable.id)) return;
    warnings.push({
      path: formatIssuePath(['variables', index, 'id']),
      message: `variable "${variable.id}" is read by no entry, condition, rule, reaction, music or interface file; only the AI sees it`,
    });
  });
  world.audioTracks.forEach((track, index) => {
    if (played.has(track.id) || corpus.includes(track.id)) return;
    warnings.push({ path: formatIssuePath(['audioTracks', index, 'id']), message: `track "${track.id}" is played by no playlist, rule, reaction, music or interface file; only the AI can play it` });
  });
  const choicesIndex = world.variables.findIndex((variable) => variable.id === 'choices');
  if (choicesIndex >= 0) {
    warnings.push({
      path: formatIssuePath(['variables', choicesIndex, 'id']),
      message: 'variable "choices" takes over the [choices: …] directive: replies of this world cannot offer the player choices',
    });
  }
  for (const { id, path } of removed) {
    if (!injected.has(id)) warnings.push({ path: formatIssuePath(path), message: `directive "${id}" is removed here but no rule or reaction injects it` });
  }
  return warnings;
}
