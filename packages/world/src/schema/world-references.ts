import type { PathSegment } from './issue-path.ts';
import { OPERATION_TYPES, RESERVED_VARIABLE_IDS, VARIABLE_OPERATIONS, type VariableOperation, type WorldVariableType } from './world-schema.ts';

/**
 * Checks that need the whole world: unique ids, references between lists, reserved variable ids,
 * values that must match a variable's type, and required companions of some fields.
 *
 * It reads the raw input defensively (anything may be the wrong type, which the zod schema
 * reports), so it runs even when the structure has problems and every issue is reported at once.
 */

export interface RawFinding {
  readonly path: readonly PathSegment[];
  readonly message: string;
}

export interface ReferenceFindings {
  readonly issues: RawFinding[];
  readonly warnings: RawFinding[];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listOf(world: Json, key: string): Array<{ item: Json; index: number }> {
  const value = world[key];
  if (!Array.isArray(value)) return [];
  const out: Array<{ item: Json; index: number }> = [];
  value.forEach((item, index) => {
    if (isObject(item)) out.push({ item, index });
  });
  return out;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const VARIABLE_TYPES_SET = new Set<string>(['number', 'string', 'boolean', 'json']);
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const ORDERING_OPERATORS = new Set(['gt', 'lt', 'gte', 'lte']);
const RESERVED = new Set<string>(RESERVED_VARIABLE_IDS);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'number' ? 'the number' : typeof value === 'boolean' ? 'the boolean' : typeof value} ${String(value)}`;
}

const TYPE_NAMES: Record<WorldVariableType, string> = {
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  json: 'an object or a list',
};

function matchesType(type: WorldVariableType, value: unknown): boolean {
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'json':
      return typeof value === 'object' && value !== null;
  }
}

/** The variable id a reaction `set` path or JSON path starts with: `inventory.items[0]` → `inventory`. */
function rootOfPath(path: string): string {
  const cut = path.search(/[.[]/);
  return cut === -1 ? path : path.slice(0, cut);
}

const AUDIO_PLAY_PATHS = new Set(['@audio.bgm', '@audio.sfx', '@audio.ambient', '@audio.stop']);
const SIMPLE_SYSTEM_PATHS = new Set(['@prompt.context', '@ui.notification', '@ai.request', '@ai.context']);

export function checkWorldReferences(world: Json): ReferenceFindings {
  const issues: RawFinding[] = [];
  const warnings: RawFinding[] = [];
  const issue = (path: readonly PathSegment[], message: string) => issues.push({ path, message });
  const warn = (path: readonly PathSegment[], message: string) => warnings.push({ path, message });

  // Unique ids within each list.
  const idsOf = (key: string): Map<string, number> => {
    const seen = new Map<string, number>();
    for (const { item, index } of listOf(world, key)) {
      const id = str(item.id);
      if (id === undefined) continue;
      const first = seen.get(id);
      if (first !== undefined) issue([key, index, 'id'], `duplicate id "${id}": ${key}[${first}] already uses it; ids must be unique within ${key}`);
      else seen.set(id, index);
    }
    return seen;
  };
  const entryIds = idsOf('entries');
  const variableIds = idsOf('variables');
  const ruleIds = idsOf('rules');
  idsOf('reactions');
  const trackIds = idsOf('audioTracks');
  idsOf('conditionalBGM');
  const folderIds = idsOf('entryFolders');

  const variables = new Map<string, { type?: WorldVariableType; item: Json }>();
  for (const { item } of listOf(world, 'variables')) {
    const id = str(item.id);
    if (id === undefined || variables.has(id)) continue;
    const type = typeof item.type === 'string' && VARIABLE_TYPES_SET.has(item.type) ? (item.type as WorldVariableType) : undefined;
    variables.set(id, type === undefined ? { item } : { type, item });
  }

  const refVariable = (path: readonly PathSegment[], value: unknown): { type?: WorldVariableType } | undefined => {
    const id = str(value);
    if (id === undefined) return undefined;
    if (!variableIds.has(id)) {
      issue(path, `names variable "${id}", which this world does not define`);
      return undefined;
    }
    return variables.get(id);
  };
  const refTrack = (path: readonly PathSegment[], value: unknown): void => {
    const id = str(value);
    if (id !== undefined && !trackIds.has(id)) issue(path, `names audio track "${id}", which this world does not define in audioTracks`);
  };
  const refEntry = (path: readonly PathSegment[], value: unknown): void => {
    const id = str(value);
    if (id !== undefined && !entryIds.has(id)) issue(path, `names entry "${id}", which this world does not define`);
  };
  const refRule = (path: readonly PathSegment[], value: unknown): void => {
    const id = str(value);
    if (id !== undefined && !ruleIds.has(id)) issue(path, `names rule "${id}", which this world does not define`);
  };

  /**
   * A condition names a variable by id, or reaches into a json variable with `id.path`
   * (`inventory.items`), as the engine reads it.
   */
  const checkConditions = (base: readonly PathSegment[], value: unknown): void => {
    if (!Array.isArray(value)) return;
    value.forEach((condition, index) => {
      if (!isObject(condition)) return;
      const path = [...base, index];
      const reference = str(condition.variableId);
      let type: WorldVariableType | undefined;
      if (reference !== undefined) {
        const rootId = reference.includes('.') && !variableIds.has(reference) ? reference.slice(0, reference.indexOf('.')) : reference;
        const variable = refVariable([...path, 'variableId'], rootId);
        if (rootId !== reference) {
          if (variable?.type !== undefined && variable.type !== 'json') {
            issue([...path, 'variableId'], `"${reference}" reaches inside variable "${rootId}", which is a ${variable.type}; only json variables have inner paths`);
          }
        } else {
          type = variable?.type;
        }
      }
      if (!('value' in condition) || condition.value === undefined) {
        issue([...path, 'value'], 'is required: the value the variable is compared with');
        return;
      }
      const operator = condition.operator;
      if (type === undefined || typeof operator !== 'string') return;
      const isNumeric = typeof condition.value === 'number' || (typeof condition.value === 'string' && NUMBER_TEXT.test(condition.value.trim()));
      if (ORDERING_OPERATORS.has(operator)) {
        if (type === 'boolean' || type === 'json') issue([...path, 'operator'], `"${operator}" compares numbers, but variable "${reference}" is a ${type}`);
        else if (!isNumeric) issue([...path, 'value'], `must be a number to compare with "${operator}", not ${describe(condition.value)}`);
        else if (type === 'string') warn([...path, 'operator'], `"${operator}" compares numbers; it holds only while string variable "${reference}" holds a number`);
      } else if (operator === 'contains') {
        if (type !== 'string' && type !== 'json') issue([...path, 'operator'], `"contains" applies to string and json variables, but variable "${reference}" is a ${type}`);
      } else if (type !== 'json' && !matchesType(type, condition.value) && !(type === 'number' && isNumeric)) {
        warn([...path, 'value'], `variable "${reference}" is a ${type}, so comparing it with ${describe(condition.value)} may never match`);
      }
    });
  };

  // Variables.
  for (const { item, index } of listOf(world, 'variables')) {
    const base = ['variables', index] as const;
    const id = str(item.id);
    if (id !== undefined && RESERVED.has(id)) {
      issue(
        [...base, 'id'],
        `"${id}" is reserved: a variable id is also its macro name, so {{${id}}} would shadow the built-in macro; choose another id such as "${id}-value"`,
      );
    }
    const type = typeof item.type === 'string' && VARIABLE_TYPES_SET.has(item.type) ? (item.type as WorldVariableType) : undefined;
    if (!('defaultValue' in item) || item.defaultValue === undefined) {
      issue([...base, 'defaultValue'], 'is required');
    } else if (type !== undefined && !matchesType(type, item.defaultValue)) {
      issue([...base, 'defaultValue'], `must be ${TYPE_NAMES[type]} because the variable's type is ${type}, not ${describe(item.defaultValue)}`);
    }
    const min = typeof item.min === 'number' ? item.min : undefined;
    const max = typeof item.max === 'number' ? item.max : undefined;
    if (type !== undefined && type !== 'number') {
      if (item.min !== undefined) issue([...base, 'min'], `applies only to number variables; this variable is a ${type}`);
      if (item.max !== undefined) issue([...base, 'max'], `applies only to number variables; this variable is a ${type}`);
    }
    if (min !== undefined && max !== undefined && min > max) issue([...base, 'min'], `must not exceed max (${min} > ${max})`);
    if (type === 'number' && typeof item.defaultValue === 'number') {
      if (min !== undefined && item.defaultValue < min) issue([...base, 'defaultValue'], `${item.defaultValue} is below min ${min}`);
      if (max !== undefined && item.defaultValue > max) issue([...base, 'defaultValue'], `${item.defaultValue} is above max ${max}`);
    }
  }

  // Entries.
  for (const { item, index } of listOf(world, 'entries')) {
    const base = ['entries', index] as const;
    checkConditions([...base, 'conditions'], item.conditions);
    const folderId = str(item.folderId);
    if (folderId !== undefined && !folderIds.has(folderId)) issue([...base, 'folderId'], `names folder "${folderId}", which this world does not define in entryFolders`);
    const keywords = Array.isArray(item.keywords) ? item.keywords : [];
    const conditions = Array.isArray(item.conditions) ? item.conditions : [];
    for (const field of ['keywords', 'secondaryKeywords'] as const) {
      const list = item[field];
      if (!Array.isArray(list)) continue;
      list.forEach((keyword, keywordIndex) => {
        if (typeof keyword === 'string' && keyword.trim() === '') warn([...base, field, keywordIndex], 'an empty keyword matches nothing');
      });
    }
    // A greeting opens the chat (startSession); it is not sent by keywords, so it is not "never sent".
    if (item.section === 'chat-history' && item.role !== 'greeting' && keywords.length === 0 && conditions.length === 0 && item.enabled !== false) {
      warn([...base, 'keywords'], 'a chat-history entry with no keywords and no conditions is never sent');
    }
    if (item.section !== 'chat-history' && item.depth !== undefined && item.depth !== null) {
      warn([...base, 'depth'], `depth applies only to chat-history entries; this entry is in ${String(item.section)}`);
    }
  }

  // Rules.
  const fireTargets = new Set<string>();
  const manualRules = new Map<string, number>();
  for (const { item, index } of listOf(world, 'rules')) {
    const base = ['rules', index] as const;
    checkConditions([...base, 'conditions'], item.conditions);
    const trigger = item.trigger;
    if (isObject(trigger)) {
      if (trigger.type === 'variable-crossed') {
        const variable = refVariable([...base, 'trigger', 'variableId'], trigger.variableId);
        if (variable?.type !== undefined && variable.type !== 'number') {
          issue([...base, 'trigger', 'variableId'], `variable-crossed needs a number variable; "${String(trigger.variableId)}" is a ${variable.type}`);
        }
      } else if (trigger.type === 'state-change') {
        refVariable([...base, 'trigger', 'variableId'], trigger.variableId);
      } else if (trigger.type === 'turn-count') {
        if ((trigger.atTurn === undefined || trigger.atTurn === null) && (trigger.everyNTurns === undefined || trigger.everyNTurns === null)) {
          issue([...base, 'trigger'], 'a turn-count trigger needs atTurn or everyNTurns');
        }
      } else if (trigger.type === 'manual' && typeof item.id === 'string') {
        manualRules.set(item.id, index);
      }
    }
    const actions = Array.isArray(item.actions) ? item.actions : [];
    if (Array.isArray(item.actions) && actions.length === 0) warn([...base, 'actions'], 'this rule has no actions, so firing it does nothing');
    actions.forEach((action, actionIndex) => {
      if (!isObject(action)) return;
      const path = [...base, 'actions', actionIndex] as const;
      switch (action.type) {
        case 'modify-variable': {
          // Like a condition, an action may reach inside a json variable (`inventory.items`): the
          // engine applies the operation there; the inner value's type is known only at run time.
          const reference = str(action.variableId);
          const rootId = reference?.includes('.') && !variableIds.has(reference) ? reference.slice(0, reference.indexOf('.')) : reference;
          const variable = refVariable([...path, 'variableId'], rootId);
          if (rootId !== reference) {
            if (variable?.type !== undefined && variable.type !== 'json') {
              issue([...path, 'variableId'], `"${reference}" reaches inside variable "${rootId}", which is a ${variable.type}; only json variables have inner paths`);
            }
            break;
          }
          const operation = typeof action.operation === 'string' && (VARIABLE_OPERATIONS as readonly string[]).includes(action.operation) ? (action.operation as VariableOperation) : undefined;
          if (operation === undefined) break;
          if (operation !== 'toggle' && action.value === undefined) issue([...path, 'value'], `is required for the ${operation} operation`);
          const type = variable?.type;
          if (type === undefined) break;
          if (!OPERATION_TYPES[operation].includes(type)) {
            issue([...path, 'operation'], `${operation} does not apply to variable "${String(action.variableId)}" of type ${type}; it applies to ${OPERATION_TYPES[operation].join(', ')}`);
          } else if (action.value !== undefined) {
            if (operation === 'set' && !matchesType(type, action.value)) {
              issue([...path, 'value'], `must be ${TYPE_NAMES[type]} to set variable "${String(action.variableId)}", not ${describe(action.value)}`);
            } else if ((operation === 'add' || operation === 'subtract' || operation === 'multiply') && typeof action.value !== 'number') {
              issue([...path, 'value'], `must be a number for ${operation}, not ${describe(action.value)}`);
            } else if (operation === 'merge' && !isObject(action.value)) {
              issue([...path, 'value'], `must be an object to merge, not ${describe(action.value)}`);
            }
          }
          break;
        }
        case 'play-audio':
          refTrack([...path, 'trackId'], action.trackId);
          break;
        case 'toggle-entry':
          refEntry([...path, 'entryId'], action.entryId);
          break;
        case 'toggle-rule':
          refRule([...path, 'ruleId'], action.ruleId);
          break;
        case 'fire-rule': {
          refRule([...path, 'ruleId'], action.ruleId);
          const target = str(action.ruleId);
          if (target !== undefined) fireTargets.add(target);
          if (target !== undefined && target === item.id) issue([...path, 'ruleId'], 'a rule cannot fire itself');
          break;
        }
        case 'inject-directive':
          if (action.position === 'depth' && (action.depth === undefined || action.depth === null)) {
            warn([...path, 'depth'], 'position is depth but no depth is given; 0 (right before the latest message) is used');
          }
          break;
      }
    });
  }
  for (const [id, index] of manualRules) {
    if (!fireTargets.has(id)) warn(['rules', index, 'trigger'], `manual rule "${id}" is not fired by any fire-rule action, so it never fires`);
  }
  for (const { item, index } of listOf(world, 'rules')) {
    const actions = Array.isArray(item.actions) ? item.actions : [];
    actions.forEach((action, actionIndex) => {
      if (!isObject(action) || action.type !== 'fire-rule') return;
      const target = str(action.ruleId);
      if (target !== undefined && ruleIds.has(target) && !manualRules.has(target)) {
        warn(['rules', index, 'actions', actionIndex, 'ruleId'], `rule "${target}" is not a manual rule; fire-rule still fires it`);
      }
    });
  }

  // Reactions.
  for (const { item, index } of listOf(world, 'reactions')) {
    const base = ['reactions', index] as const;
    checkConditions([...base, 'conditions'], item.conditions);
    if (isObject(item.when) && item.when.eventType === 'state:changed' && item.when.variableId !== undefined) {
      refVariable([...base, 'when', 'variableId'], item.when.variableId);
    }
    const effects = Array.isArray(item.then) ? item.then : [];
    effects.forEach((effect, effectIndex) => {
      if (!isObject(effect) || effect.type !== 'set') return;
      const path = [...base, 'then', effectIndex] as const;
      const target = str(effect.path);
      if (target === undefined) return;
      if (target.startsWith('@')) {
        if (AUDIO_PLAY_PATHS.has(target)) {
          const trackId = isObject(effect.value) ? effect.value.trackId : effect.value;
          refTrack([...path, 'value'], trackId);
        } else if (target.startsWith('@prompt.entry.')) {
          refEntry([...path, 'path'], target.slice('@prompt.entry.'.length));
        } else if (target.startsWith('@rules.disabled.')) {
          refRule([...path, 'path'], target.slice('@rules.disabled.'.length));
        } else if (target.startsWith('@prompt.directive.') && target.length > '@prompt.directive.'.length) {
          // Any directive id may be injected.
        } else if (!SIMPLE_SYSTEM_PATHS.has(target)) {
          issue(
            [...path, 'path'],
            `"${target}" is not a system path; use @audio.bgm, @audio.sfx, @audio.ambient, @audio.stop, @prompt.directive.<id>, @prompt.entry.<id>, @prompt.context, @rules.disabled.<id>, @ui.notification, @ai.request or @ai.context`,
          );
        }
        return;
      }
      const rootId = rootOfPath(target);
      const variable = refVariable([...path, 'path'], rootId);
      const operation = typeof effect.operation === 'string' ? (effect.operation as VariableOperation) : undefined;
      if (variable?.type !== undefined && operation !== undefined && rootId === target && OPERATION_TYPES[operation] && !OPERATION_TYPES[operation].includes(variable.type)) {
        issue([...path, 'operation'], `${operation} does not apply to variable "${rootId}" of type ${variable.type}`);
      }
      if (rootId !== target && variable?.type !== undefined && variable.type !== 'json') {
        issue([...path, 'path'], `"${target}" reaches inside variable "${rootId}", which is a ${variable.type}; only json variables have inner paths`);
      }
    });
  }

  // Audio.
  const playlist = world.bgmPlaylist;
  if (isObject(playlist) && Array.isArray(playlist.tracks)) {
    playlist.tracks.forEach((trackId, index) => {
      refTrack(['bgmPlaylist', 'tracks', index], trackId);
    });
    if (playlist.tracks.length === 0) warn(['bgmPlaylist', 'tracks'], 'the playlist has no tracks');
  }
  for (const { item, index } of listOf(world, 'conditionalBGM')) {
    const base = ['conditionalBGM', index] as const;
    refTrack([...base, 'targetTrackId'], item.targetTrackId);
    const fallback = str(item.fallback);
    if (fallback !== undefined && fallback !== 'default' && fallback !== 'previous') refTrack([...base, 'fallback'], fallback);
    checkConditions([...base, 'conditions'], item.conditions);
    const keywords = Array.isArray(item.keywords) ? item.keywords : [];
    const conditions = Array.isArray(item.conditions) ? item.conditions : [];
    if ((item.triggerType === 'keyword' || item.triggerType === 'ai-keyword') && keywords.length === 0) {
      issue([...base, 'keywords'], `a ${item.triggerType} trigger needs at least one keyword`);
    }
    if (item.triggerType === 'variable' && conditions.length === 0) issue([...base, 'conditions'], 'a variable trigger needs at least one condition');
    if (item.triggerType === 'turn-count' && (item.atTurn === undefined || item.atTurn === null) && (item.everyNTurns === undefined || item.everyNTurns === null)) {
      issue([...base, 'atTurn'], 'a turn-count trigger needs atTurn or everyNTurns');
    }
  }

  // Custom interface.
  const root = world.rootComponent;
  if (isObject(root) && isObject(root.files) && typeof root.entryFile === 'string' && root.entryFile !== '' && !(root.entryFile in root.files)) {
    issue(['rootComponent', 'entryFile'], `"${root.entryFile}" is not one of the files of rootComponent.files`);
  }
  if (isObject(root) && Array.isArray(world.customUI) && world.customUI.length > 0) {
    warn(['customUI'], 'customUI is the legacy interface system; rootComponent replaces it and is used when both are present');
  }

  // Settings.
  const settings = world.settings;
  if (isObject(settings) && typeof settings.maxTokens === 'number' && typeof settings.maxContext === 'number' && settings.maxTokens > settings.maxContext) {
    warn(['settings', 'maxTokens'], `the response budget (${settings.maxTokens} tokens) is larger than the context window (${settings.maxContext})`);
  }

  // Tags.
  if (isObject(world.customTagColors)) {
    const tags = new Set(Array.isArray(world.customTags) ? world.customTags : []);
    for (const tag of Object.keys(world.customTagColors)) {
      if (!tags.has(tag)) warn(['customTagColors', tag], `tag "${tag}" has a color but is not listed in customTags`);
    }
  }
  return { issues, warnings };
}
