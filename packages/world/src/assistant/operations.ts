import { z } from 'zod';
import { validateWorld, type ValidationIssue } from '../schema/validate-world.ts';
import { entrySchema, reactionSchema, ruleSchema, settingsSchema, variableSchema } from '../schema/world-schema.ts';
import { type DiffLine, lineDiff } from './line-diff.ts';

/**
 * The studio assistant's world operations (docs/STUDIO-ASSISTANT.md): the only things its tools can
 * do. Each is a change to one part of one world definition held in memory; nothing here reaches a
 * database, the network or another world. `applyOperation` applies one to a copy and validates the
 * whole result with the world schema: an operation that would leave the world invalid is refused
 * with the validator's issues (they go back to the model as the tool's error), never applied.
 */

type Obj = Record<string, unknown>;

/** Interface file names: a path of word characters, dots and dashes with a source or style extension. */
export const INTERFACE_FILE_PATTERN = /^(?:[\w-]+\/)*[\w.-]+\.(tsx|ts|jsx|js|css)$/;
/** The longest interface file the assistant may write (characters). */
export const INTERFACE_FILE_MAX_CHARS = 100_000;

const id = z.string().min(1).max(200);
const item = z.record(z.string(), z.unknown());

/** The settings an operation may change, by name. */
export const SETTING_KEYS = Object.keys(settingsSchema.shape) as (keyof typeof settingsSchema.shape)[];

export const assistantOperationSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('set_entry'), entry: item }),
  z.strictObject({ op: z.literal('remove_entry'), id }),
  z.strictObject({ op: z.literal('set_variable'), variable: item }),
  z.strictObject({ op: z.literal('remove_variable'), id }),
  z.strictObject({ op: z.literal('set_rule'), rule: item }),
  z.strictObject({ op: z.literal('remove_rule'), id }),
  z.strictObject({ op: z.literal('set_reaction'), reaction: item }),
  z.strictObject({ op: z.literal('remove_reaction'), id }),
  z.strictObject({ op: z.literal('set_greeting'), id, name: z.string().max(200).optional(), content: z.string().min(1).max(50_000) }),
  z.strictObject({ op: z.literal('set_setting'), key: z.enum(SETTING_KEYS as [string, ...string[]]), value: z.unknown() }),
  z.strictObject({
    op: z.literal('set_interface_file'),
    path: z.string().regex(INTERFACE_FILE_PATTERN, { message: 'must be a file name such as "index.tsx" or "panel.css"' }).max(200),
    content: z.string().max(INTERFACE_FILE_MAX_CHARS),
    entry: z.boolean().optional(),
  }),
  z.strictObject({ op: z.literal('remove_interface_file'), path: z.string().min(1).max(200) }),
  z.strictObject({ op: z.literal('set_cover_text'), name: z.string().min(1).max(200).optional(), description: z.string().max(10_000).optional() }),
]);

export type AssistantOperation = z.output<typeof assistantOperationSchema>;
export type AssistantOperationName = AssistantOperation['op'];
export const ASSISTANT_OPERATION_NAMES = assistantOperationSchema.options.map((o) => o.shape.op.value) as AssistantOperationName[];

/** What one applied operation did, readably: the card's line and its diff. */
export interface OperationChange {
  kind: 'add' | 'change' | 'remove';
  /** `variable health`, `interface file index.tsx`, `setting temperature`… */
  target: string;
  summary: string;
  diff: DiffLine[];
}

export type ApplyResult = { ok: true; world: Obj; change: OperationChange; touchesInterface: boolean } | { ok: false; error: string; issues: ValidationIssue[] };

const pretty = (value: unknown) => (value === undefined ? '' : JSON.stringify(value, null, 2));
const listOf = (world: Obj, key: string) => (Array.isArray(world[key]) ? (world[key] as Obj[]) : []);

function upsert(world: Obj, key: string, value: Obj): { next: Obj; before: Obj | undefined } {
  const list = listOf(world, key);
  const index = list.findIndex((x) => x.id === value.id);
  const copy = [...list];
  if (index >= 0) copy[index] = value;
  else copy.push(value);
  return { next: { ...world, [key]: copy }, before: index >= 0 ? list[index] : undefined };
}

function remove(world: Obj, key: string, itemId: string): { next: Obj; before: Obj | undefined } {
  const list = listOf(world, key);
  const before = list.find((x) => x.id === itemId);
  return { next: { ...world, [key]: list.filter((x) => x.id !== itemId) }, before };
}

function change(kindOf: 'entry' | 'variable' | 'rule' | 'reaction' | 'greeting', before: Obj | undefined, after: Obj | undefined, itemId: string): OperationChange {
  const kind = !before ? 'add' : !after ? 'remove' : 'change';
  const label = (o: Obj | undefined) => (o && typeof o.name === 'string' && o.name ? ` “${o.name}”` : '');
  const verb = kind === 'add' ? 'Add' : kind === 'remove' ? 'Remove' : 'Change';
  return { kind, target: `${kindOf} ${itemId}`, summary: `${verb} ${kindOf} ${itemId}${label(after ?? before)}`, diff: lineDiff(pretty(before), pretty(after)) };
}

/** An entry the model wrote without its section gets the usual one (greetings in the chat history, the rest in the system presets). */
function withEntryDefaults(entry: Obj): Obj {
  if (entry.section !== undefined) return entry;
  return { ...entry, section: entry.role === 'greeting' ? 'chat-history' : 'system-presets' };
}

/** Applies one operation to a copy of `world` (never changing `world`); no validation. */
export function applyUnchecked(world: Obj, op: AssistantOperation, now: () => string = () => new Date().toISOString(), newId: () => string = () => globalThis.crypto.randomUUID()): { world: Obj; change: OperationChange } {
  switch (op.op) {
    case 'set_entry':
    case 'set_variable':
    case 'set_rule':
    case 'set_reaction': {
      const [key, kind, value] =
        op.op === 'set_entry'
          ? (['entries', 'entry', withEntryDefaults(op.entry)] as const)
          : op.op === 'set_variable'
            ? (['variables', 'variable', op.variable] as const)
            : op.op === 'set_rule'
              ? (['rules', 'rule', op.rule] as const)
              : (['reactions', 'reaction', op.reaction] as const);
      const { next, before } = upsert(world, key, value);
      return { world: next, change: change(kind, before, value, String(value.id ?? '')) };
    }
    case 'set_greeting': {
      const before = listOf(world, 'entries').find((e) => e.id === op.id);
      const value: Obj = { ...(before ?? {}), id: op.id, name: op.name ?? (before?.name as string | undefined) ?? 'Greeting', content: op.content, role: 'greeting', apiRole: 'assistant', section: 'chat-history' };
      const { next } = upsert(world, 'entries', value);
      return { world: next, change: change('greeting', before, value, op.id) };
    }
    case 'remove_entry':
    case 'remove_variable':
    case 'remove_rule':
    case 'remove_reaction': {
      const [key, kind] = ({ remove_entry: ['entries', 'entry'], remove_variable: ['variables', 'variable'], remove_rule: ['rules', 'rule'], remove_reaction: ['reactions', 'reaction'] } as const)[op.op];
      const { next, before } = remove(world, key, op.id);
      if (!before) throw new OperationRefused(`There is no ${kind} with the id "${op.id}".`);
      return { world: next, change: change(kind, before, undefined, op.id) };
    }
    case 'set_setting': {
      const settings = (world.settings && typeof world.settings === 'object' ? world.settings : {}) as Obj;
      const before = settings[op.key];
      return {
        world: { ...world, settings: { ...settings, [op.key]: op.value } },
        change: {
          kind: before === undefined ? 'add' : 'change',
          target: `setting ${op.key}`,
          summary: `Set ${op.key} to ${JSON.stringify(op.value)}`,
          diff: lineDiff(before === undefined ? '' : `${op.key}: ${JSON.stringify(before)}`, `${op.key}: ${JSON.stringify(op.value)}`),
        },
      };
    }
    case 'set_interface_file': {
      const root = (world.rootComponent && typeof world.rootComponent === 'object' ? world.rootComponent : null) as Obj | null;
      const files = (root?.files ?? {}) as Record<string, string>;
      const before = files[op.path];
      const entryFile = op.entry || !root ? op.path : String(root.entryFile);
      const next: Obj = { id: root?.id ?? newId(), name: root?.name ?? 'Screen', ...(root ?? {}), entryFile, files: { ...files, [op.path]: op.content }, updatedAt: now() };
      return {
        world: { ...world, rootComponent: next },
        change: {
          kind: before === undefined ? 'add' : 'change',
          target: `interface file ${op.path}`,
          summary: `${before === undefined ? 'Add' : 'Change'} interface file ${op.path}${entryFile === op.path ? ' (entry)' : ''}`,
          diff: lineDiff(before ?? '', op.content),
        },
      };
    }
    case 'remove_interface_file': {
      const root = world.rootComponent as Obj | null | undefined;
      const files = (root?.files ?? {}) as Record<string, string>;
      if (!root || !(op.path in files)) throw new OperationRefused(`The interface has no file "${op.path}".`);
      const rest = Object.fromEntries(Object.entries(files).filter(([path]) => path !== op.path));
      const last = Object.keys(rest).length === 0;
      if (!last && root.entryFile === op.path) throw new OperationRefused(`"${op.path}" is the interface's entry file: make another file the entry first, or remove every file.`);
      return {
        world: { ...world, rootComponent: last ? null : { ...root, files: rest, updatedAt: now() } },
        change: { kind: 'remove', target: `interface file ${op.path}`, summary: `Remove interface file ${op.path}${last ? ' (the world goes back to the standard chat screen)' : ''}`, diff: lineDiff(files[op.path] ?? '', '') },
      };
    }
    case 'set_cover_text': {
      if (op.name === undefined && op.description === undefined) throw new OperationRefused('Give a name, a description or both.');
      const before = { name: world.name, description: world.description ?? '' };
      const after = { name: op.name ?? world.name, description: op.description ?? world.description ?? '' };
      return {
        world: { ...world, ...after },
        change: { kind: 'change', target: 'cover text', summary: 'Change the cover text (name and description)', diff: lineDiff(pretty(before), pretty(after)) },
      };
    }
  }
}

/** An operation that cannot apply to this world (it names something absent). */
export class OperationRefused extends Error {}

/** Issues of `next` that `before` did not have (a world stored valid has none; a draft may). */
function newIssues(before: ValidationIssue[], next: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set(before.map((i) => `${i.path}\u0000${i.message}`));
  return next.filter((i) => !seen.has(`${i.path}\u0000${i.message}`));
}

export function issuesOf(world: Obj): ValidationIssue[] {
  const result = validateWorld(world);
  return result.ok ? [] : result.issues;
}

/**
 * Parses a tool call's arguments as an operation and applies it, validating the whole world after
 * it. Refused (with a message for the model) when the arguments are not an operation, the operation
 * names something absent, or the world would not validate afterwards.
 */
export function applyOperation(world: Obj, op: unknown, options: { now?: () => string; newId?: () => string; issuesBefore?: ValidationIssue[] } = {}): ApplyResult & { operation?: AssistantOperation } {
  const parsed = assistantOperationSchema.safeParse(op);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    return { ok: false, error: `The arguments are not a valid operation: ${issues.map((i) => `${i.path || '(arguments)'}: ${i.message}`).join('; ')}`, issues };
  }
  let applied: { world: Obj; change: OperationChange };
  try {
    applied = applyUnchecked(world, parsed.data, options.now, options.newId);
  } catch (err) {
    if (err instanceof OperationRefused) return { ok: false, error: err.message, issues: [] };
    throw err;
  }
  const issues = newIssues(options.issuesBefore ?? issuesOf(world), issuesOf(applied.world));
  if (issues.length > 0) {
    const shown = issues.slice(0, 8).map((i) => `${i.path || '(world)'}: ${i.message}`);
    return { ok: false, error: `The world would not validate after this operation, so it was not applied: ${shown.join('; ')}${issues.length > 8 ? ` (and ${issues.length - 8} more)` : ''}`, issues };
  }
  return { ok: true, world: applied.world, change: applied.change, touchesInterface: parsed.data.op === 'set_interface_file' || parsed.data.op === 'remove_interface_file', operation: parsed.data };
}

/** Applies a whole card's operations in order (at approval, to the world as it is then); the first refusal stops it. */
export function applyOperations(world: Obj, ops: readonly AssistantOperation[], options: { now?: () => string; newId?: () => string } = {}): { ok: true; world: Obj } | { ok: false; index: number; error: string } {
  let current = world;
  let before = issuesOf(world);
  for (const [index, op] of ops.entries()) {
    const result = applyOperation(current, op, { ...options, issuesBefore: before });
    if (!result.ok) return { ok: false, index, error: result.error };
    current = result.world;
    before = [];
  }
  return { ok: true, world: current };
}

/** The JSON Schema of an item as an author may write it (defaulted fields optional). */
function inputSchema(schema: z.ZodType): Record<string, unknown> {
  // nested inside a tool's parameters, so without the root-only `$schema` keyword
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}
const idParam = (what: string) => ({ type: 'object', properties: { id: { type: 'string', description: `The ${what}'s id.` } }, required: ['id'], additionalProperties: false });

/** The assistant's tools, in the shape packages/ai's ToolDefinition takes: one per operation, nothing else. */
export function assistantTools(): Array<{ name: AssistantOperationName; description: string; parameters: Record<string, unknown> }> {
  const wrap = (key: string, schema: z.ZodType) => ({ type: 'object', properties: { [key]: inputSchema(schema) }, required: [key], additionalProperties: false });
  return [
    { name: 'set_entry', description: 'Adds an entry, or replaces the entry with the same id (give the whole entry).', parameters: wrap('entry', entrySchema) },
    { name: 'remove_entry', description: 'Removes an entry.', parameters: idParam('entry') },
    { name: 'set_variable', description: 'Adds a variable, or replaces the variable with the same id (give the whole variable).', parameters: wrap('variable', variableSchema) },
    { name: 'remove_variable', description: 'Removes a variable.', parameters: idParam('variable') },
    { name: 'set_rule', description: 'Adds a rule, or replaces the rule with the same id (give the whole rule).', parameters: wrap('rule', ruleSchema) },
    { name: 'remove_rule', description: 'Removes a rule.', parameters: idParam('rule') },
    { name: 'set_reaction', description: 'Adds a reaction, or replaces the reaction with the same id (give the whole reaction).', parameters: wrap('reaction', reactionSchema) },
    { name: 'remove_reaction', description: 'Removes a reaction.', parameters: idParam('reaction') },
    {
      name: 'set_greeting',
      description: 'Adds or replaces a greeting (the opening message of a chat; an entry with role greeting).',
      parameters: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, content: { type: 'string' } }, required: ['id', 'content'], additionalProperties: false },
    },
    {
      name: 'set_setting',
      description: 'Changes one generation setting.',
      parameters: { type: 'object', properties: { key: { type: 'string', enum: SETTING_KEYS }, value: {} }, required: ['key', 'value'], additionalProperties: false },
    },
    {
      name: 'set_interface_file',
      description:
        'Writes one file of the custom interface (TSX/TS/JS/CSS; the entry file default-exports a React component and reads state with useYumina()). Creates the interface when the world has none; `entry: true` makes this file the entry.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' }, entry: { type: 'boolean' } },
        required: ['path', 'content'],
        additionalProperties: false,
      },
    },
    {
      name: 'remove_interface_file',
      description: 'Removes one file of the custom interface (removing the last one goes back to the standard chat screen).',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    },
    {
      name: 'set_cover_text',
      description: "Changes the world's cover text: its name and/or description (what the library shows).",
      parameters: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' } }, additionalProperties: false },
    },
  ];
}

/** A tool call as an operation object (`{ op: name, ...arguments }`), or the reason it is not one. */
export function operationOfCall(name: string, argumentsText: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!(ASSISTANT_OPERATION_NAMES as string[]).includes(name)) {
    return { ok: false, error: `There is no tool "${name.slice(0, 80)}". The only tools are world operations on this world: ${ASSISTANT_OPERATION_NAMES.join(', ')}.` };
  }
  let args: unknown;
  try {
    args = argumentsText.trim() ? JSON.parse(argumentsText) : {};
  } catch {
    return { ok: false, error: 'The arguments are not valid JSON.' };
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return { ok: false, error: 'The arguments must be a JSON object.' };
  return { ok: true, value: { ...(args as Obj), op: name } };
}
