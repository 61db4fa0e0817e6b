import { conditionsHold } from './conditions.ts';
import { hasPrototypeSegment } from './json-path.ts';
import { matchesAnyKeyword, normalizeForMatch } from './keywords.ts';
import { expandMacros } from './macros.ts';
import {
  changeVariable,
  injectDirective,
  isRuleEnabled,
  type NotificationStyle,
  playTrack,
  removeDirective,
  type TurnWork,
  type WorldEvent,
} from './turn-work.ts';
import type { EngineRule, EngineRuleAction, EngineRuleTrigger } from './world-types.ts';

/**
 * How many rules may chain through `fire-rule` below the one an event fired (A fires B fires C
 * ... stops at depth 8). Each rule also fires at most once per turn, so chains cannot loop.
 */
export const MAX_RULE_CHAIN_DEPTH = 8;

const NOTIFICATION_STYLES: readonly NotificationStyle[] = ['info', 'achievement', 'warning', 'danger'];

const normalizedContent = new WeakMap<WorldEvent, string>();

/** An event's content, normalized once however many rules look at it. */
function contentOf(event: WorldEvent): string {
  let text = normalizedContent.get(event);
  if (text === undefined) {
    text = normalizeForMatch(String(event.content ?? ''));
    normalizedContent.set(event, text);
  }
  return text;
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Whether `trigger` fires for `event` on turn `turn`. */
export function triggerMatches(trigger: EngineRuleTrigger, event: WorldEvent, turn: number): boolean {
  // Seed 002 §2.6: the message "contains" a keyword (case-insensitive substring); whole words only on request.
  const wholeWords = trigger.matchWholeWords ?? false;
  switch (trigger.type) {
    case 'keyword':
      return event.type === 'message:user' && matchesAnyKeyword(contentOf(event), trigger.keywords, wholeWords);
    case 'ai-keyword':
      return event.type === 'message:ai' && matchesAnyKeyword(contentOf(event), trigger.keywords, wholeWords);
    case 'session-start':
      return event.type === 'session:start';
    case 'every-turn':
      return event.type === 'turn:complete';
    case 'turn-count': {
      if (event.type !== 'turn:complete') return false;
      const every = trigger.everyNTurns ?? 0;
      return trigger.atTurn === turn || (every > 0 && turn % every === 0);
    }
    case 'state-change':
      return event.type === 'state:changed' && (!trigger.variableId || trigger.variableId === event.variableId);
    case 'variable-crossed': {
      if (event.type !== 'state:changed' || trigger.variableId !== event.variableId) return false;
      const before = numberOf(event.oldValue);
      const after = numberOf(event.newValue);
      const threshold = trigger.threshold;
      if (before === undefined || after === undefined || threshold === undefined) return false;
      return trigger.direction === 'drops-below' ? before >= threshold && after < threshold : before <= threshold && after > threshold;
    }
    case 'action':
      return event.type === 'action' && event.actionId === trigger.actionId;
    default:
      // `manual` rules never fire from events; only `fire-rule` reaches them.
      return false;
  }
}

/**
 * Whether the rule may fire now: enabled, not yet this turn, cooldown elapsed, below maxFireCount,
 * conditions hold against `variables` (the state before the event's rules acted, or the current one).
 */
function mayFire(work: TurnWork, rule: EngineRule, variables: Readonly<Record<string, unknown>> = work.state.variables): boolean {
  if (!isRuleEnabled(rule, work.state) || work.firedThisTurn.has(rule.id)) return false;
  const bookkeeping = work.state.rules[rule.id];
  const cooldown = rule.cooldownTurns ?? 0;
  if (bookkeeping?.lastFiredTurn != null && cooldown > 0 && work.turn - bookkeeping.lastFiredTurn < cooldown) return false;
  if (rule.maxFireCount != null && (bookkeeping?.fireCount ?? 0) >= rule.maxFireCount) return false;
  return conditionsHold(rule.conditions, rule.conditionLogic, variables);
}

function runAction(work: TurnWork, rule: EngineRule, action: EngineRuleAction, chainDepth: number): void {
  const source = `rule:${rule.id}`;
  switch (action.type) {
    case 'modify-variable':
      if (action.variableId) changeVariable(work, action.variableId, action.operation ?? 'set', { value: action.value }, source);
      return;
    case 'inject-directive':
      if (action.directiveId) {
        injectDirective(
          work,
          {
            id: action.directiveId,
            content: action.content ?? '',
            position: action.position,
            depth: action.depth,
            persistent: action.persistent,
            duration: action.duration,
          },
          source,
        );
      }
      return;
    case 'remove-directive':
      if (action.directiveId) removeDirective(work, action.directiveId);
      return;
    case 'notify-player': {
      const style = (NOTIFICATION_STYLES as readonly string[]).includes(action.style ?? '') ? (action.style as NotificationStyle) : 'info';
      work.notifications.push({ style, message: expandMacros(action.message ?? '', work.macros), source });
      return;
    }
    case 'play-audio':
      if (action.trackId) playTrack(work, action.trackId, action.action ?? 'play', source);
      return;
    case 'toggle-entry':
      if (action.entryId && !hasPrototypeSegment([action.entryId])) {
        const current = work.state.entryEnabled[action.entryId] ?? work.world.entries.find((entry) => entry.id === action.entryId)?.enabled ?? true;
        work.state.entryEnabled[action.entryId] = action.enabled ?? !current;
      }
      return;
    case 'toggle-rule':
      if (action.ruleId && !hasPrototypeSegment([action.ruleId])) {
        const target = work.rules.get(action.ruleId);
        const current = target ? isRuleEnabled(target, work.state) : true;
        work.state.ruleEnabled[action.ruleId] = action.enabled ?? !current;
      }
      return;
    case 'send-context':
      work.state.pendingContext.push({
        role: action.role === 'user' ? 'user' : 'system',
        content: expandMacros(action.message ?? action.content ?? '', work.macros),
        source,
      });
      return;
    case 'fire-rule': {
      const target = action.ruleId ? work.rules.get(action.ruleId) : undefined;
      if (!target) {
        work.warnings.push({ source, message: `fire-rule names unknown rule "${action.ruleId ?? ''}"` });
        return;
      }
      if (chainDepth + 1 > MAX_RULE_CHAIN_DEPTH) {
        work.warnings.push({ source, message: `fire-rule chain deeper than ${MAX_RULE_CHAIN_DEPTH}; "${target.id}" not fired` });
        return;
      }
      fireRule(work, target, 'fire-rule', chainDepth + 1);
      return;
    }
    default:
      work.warnings.push({ source, message: `unknown action type "${action.type}"` });
  }
}

/**
 * Fires the rule if it may fire now; returns whether it did. `decided` rules were chosen against
 * the state before their event's rules acted: only the once-per-turn limit is checked again (a
 * fire-rule chain earlier in the same event may have fired it).
 */
export function fireRule(work: TurnWork, rule: EngineRule, firedBy: string, chainDepth: number, decided = false): boolean {
  if (decided ? work.firedThisTurn.has(rule.id) : !mayFire(work, rule)) return false;
  work.firedThisTurn.add(rule.id);
  const previous = work.state.rules[rule.id];
  work.state.rules[rule.id] = { fireCount: (previous?.fireCount ?? 0) + 1, lastFiredTurn: work.turn };
  work.firedRules.push({ ruleId: rule.id, name: rule.name ?? rule.id, firedBy, chainDepth });
  for (const action of rule.actions) runAction(work, rule, action, chainDepth);
  return true;
}

/** Rules in firing order: higher priority first, ties in definition order. */
export function orderRules(rules: readonly EngineRule[]): EngineRule[] {
  return rules
    .map((rule, index) => ({ rule, index }))
    .sort((left, right) => (right.rule.priority ?? 0) - (left.rule.priority ?? 0) || left.index - right.index)
    .map(({ rule }) => rule);
}

/**
 * The rules an event fires, decided against `before` (the variables before any rule or reaction
 * matched against this event acted), so either/or rules fire exactly one branch.
 */
export function rulesForEvent(work: TurnWork, orderedRules: readonly EngineRule[], event: WorldEvent, before: Readonly<Record<string, unknown>>): EngineRule[] {
  return orderedRules.filter((rule) => triggerMatches(rule.trigger, event, work.turn) && mayFire(work, rule, before));
}

/** Runs the actions of rules already chosen for an event, in priority order. */
export function fireRulesForEvent(work: TurnWork, rules: readonly EngineRule[], event: WorldEvent): void {
  for (const rule of rules) fireRule(work, rule, event.type, 0, true);
}
