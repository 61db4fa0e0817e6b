import { conditionsHold } from './conditions.ts';
import { deepEqual, isPlainObject } from './json-path.ts';
import { expandMacros } from './macros.ts';
import { changeVariable, injectDirective, type NotificationStyle, playTrack, removeDirective, type TurnWork, type WorldEvent } from './turn-work.ts';
import type { EngineReaction, EngineReactionEffect } from './world-types.ts';

/**
 * A reaction matches when the event's type equals `when.eventType` and every other member of
 * `when` equals the event's member of that name (deep equality). Custom event types such as
 * `spatial:zone-enter` with a `zone` need no registration: they pass through unchanged.
 */
export function reactionMatches(reaction: EngineReaction, event: WorldEvent): boolean {
  if (reaction.when.eventType !== event.type) return false;
  for (const [member, expected] of Object.entries(reaction.when)) {
    if (member === 'eventType' || expected === undefined) continue;
    if (!deepEqual(event[member], expected)) return false;
  }
  return true;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isPlainObject(value) && typeof value.message === 'string') return value.message;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function truthy(value: unknown): boolean {
  if (typeof value === 'string') return value !== '' && value.toLowerCase() !== 'false';
  return Boolean(value);
}

function setSystemPath(work: TurnWork, path: string, value: unknown, source: string): void {
  const [root = '', group = '', ...restParts] = path.slice(1).split('.');
  const rest = restParts.join('.');
  const key = `${root}.${group}`;
  if (key === 'audio.bgm' || key === 'audio.sfx' || key === 'audio.ambient') {
    const trackId = isPlainObject(value) && typeof value.trackId === 'string' ? value.trackId : text(value);
    playTrack(work, trackId, 'play', source);
    return;
  }
  if (key === 'audio.stop') {
    playTrack(work, isPlainObject(value) && typeof value.trackId === 'string' ? value.trackId : text(value), 'stop', source);
    return;
  }
  if (key === 'prompt.directive' && rest) {
    if (value === null || value === false || value === '') {
      removeDirective(work, rest);
      return;
    }
    const spec = isPlainObject(value) ? value : { content: text(value) };
    injectDirective(
      work,
      {
        id: rest,
        content: expandMacros(typeof spec.content === 'string' ? spec.content : '', work.macros),
        position: typeof spec.position === 'string' ? spec.position : undefined,
        depth: typeof spec.depth === 'number' ? spec.depth : null,
        persistent: spec.persistent === undefined ? true : spec.persistent === true,
        duration: typeof spec.duration === 'number' ? spec.duration : null,
      },
      source,
    );
    return;
  }
  if ((key === 'prompt.entry' || key === 'rules.disabled') && rest && PROTOTYPE_KEYS.has(rest)) {
    work.warnings.push({ source, message: `"${path}" names a prototype key; nothing was changed` });
    return;
  }
  if (key === 'prompt.entry' && rest) {
    work.state.entryEnabled[rest] = truthy(value);
    return;
  }
  if (key === 'rules.disabled' && rest) {
    work.state.ruleEnabled[rest] = !truthy(value);
    return;
  }
  if (path === '@prompt.context' || path === '@ai.context') {
    const role = isPlainObject(value) && value.role === 'user' ? 'user' : 'system';
    work.state.pendingContext.push({ role, content: expandMacros(text(value), work.macros), source });
    return;
  }
  if (path === '@ui.notification') {
    const style = isPlainObject(value) && typeof value.style === 'string' ? value.style : 'info';
    const known: readonly string[] = ['info', 'achievement', 'warning', 'danger'];
    work.notifications.push({ style: (known.includes(style) ? style : 'info') as NotificationStyle, message: expandMacros(text(value), work.macros), source });
    return;
  }
  if (path === '@ai.request') {
    work.aiRequests.push({ source, value: value ?? null });
    return;
  }
  work.warnings.push({ source, message: `unknown system path "${path}"` });
}

function runEffect(work: TurnWork, reaction: EngineReaction, effect: EngineReactionEffect): void {
  const source = `reaction:${reaction.id}`;
  if (effect.type === 'emit') {
    if (effect.event && typeof effect.event.type === 'string') work.queue.push({ ...effect.event });
    else work.warnings.push({ source, message: 'emit needs an event with a type' });
    return;
  }
  if (effect.type !== 'set' || !effect.path) {
    work.warnings.push({ source, message: `unknown effect "${effect.type}"` });
    return;
  }
  if (effect.path.startsWith('@')) setSystemPath(work, effect.path, effect.value, source);
  else changeVariable(work, effect.path, effect.operation ?? 'set', { value: effect.value }, source);
}

/** The reactions an event fires, decided against `before` (the variables before any rule or reaction acted on it). */
export function reactionsForEvent(reactions: readonly EngineReaction[], event: WorldEvent, before: Readonly<Record<string, unknown>>): EngineReaction[] {
  return reactions.filter(
    (reaction) => reaction.enabled !== false && reactionMatches(reaction, event) && conditionsHold(reaction.conditions, reaction.conditionLogic, before),
  );
}

/** Runs the effects of reactions already chosen for an event, in definition order. */
export function runReactionsForEvent(work: TurnWork, reactions: readonly EngineReaction[], event: WorldEvent): void {
  for (const reaction of reactions) {
    work.firedReactions.push({ reactionId: reaction.id, eventType: event.type });
    for (const effect of reaction.then) runEffect(work, reaction, effect);
  }
}
