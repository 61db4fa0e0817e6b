import type { z } from 'zod';
import { formatIssuePath, type PathSegment } from '../schema/issue-path.ts';
import { plainMessage } from '../schema/validate-world.ts';
import { checkWorldReferences } from '../schema/world-references.ts';
import {
  audioTrackSchema,
  conditionalBgmSchema,
  entrySchema,
  reactionSchema,
  ruleActionSchema,
  ruleSchema,
  settingsSchema,
  variableSchema,
  WORLD_ID_PATTERN,
  worldDefinitionSchema,
} from '../schema/world-schema.ts';
import type { ReportBuilder } from './import-report.ts';

/**
 * Repairs an imported world that does not validate, so that one part that cannot convert never
 * refuses the whole world (issue 31). Each round validates (the schema's own issues, with their
 * limits, and the cross-references) and then, per issue:
 *  - repairs what has an obvious meaning: a text over its limit is cut at the limit; a number
 *    outside its bounds is brought inside; an `inject-directive`/`remove-directive` action without
 *    an id gets one derived from its rule's id and position; an id that is not kebab-case is
 *    rewritten as one; a duplicate id gets a suffix; a missing name becomes the item's id; a
 *    missing or blank world name becomes "Imported world";
 *  - otherwise drops the smallest part that holds the issue: the innermost list item (an action,
 *    a condition, an effect, an entry, a variable, a rule …), or, outside lists, the field itself
 *    (its default applies).
 * Every repair and drop is a report line naming the path in the input's terms. Rounds repeat
 * (a dropped variable can leave a rule naming it) until the world validates; the caller refuses
 * only what no repair reaches (an issue at the root).
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const MAX_ROUNDS = 16;
const IMPORTED_NAME = 'Imported world';

interface Issue {
  path: PathSegment[];
  message: string;
  code?: string;
  maximum?: number;
  minimum?: number;
  origin?: string;
}

function issuesOf(world: Json): Issue[] {
  const issues: Issue[] = [];
  const parsed = worldDefinitionSchema.safeParse(world, { reportInput: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues as z.core.$ZodIssue[]) {
      const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== 'symbol');
      if (path[0] === 'version' && path.length === 1) continue;
      const bounds = issue as { maximum?: number | bigint; minimum?: number | bigint; origin?: string };
      issues.push({
        path,
        message: plainMessage(issue),
        code: issue.code,
        ...(bounds.maximum !== undefined ? { maximum: Number(bounds.maximum) } : {}),
        ...(bounds.minimum !== undefined ? { minimum: Number(bounds.minimum) } : {}),
        ...(bounds.origin !== undefined ? { origin: bounds.origin } : {}),
      });
    }
  }
  for (const finding of checkWorldReferences(world).issues) issues.push({ path: [...finding.path], message: finding.message });
  return issues;
}

/** Where each list item came from in the input, so a report line names the input's path after earlier items were dropped. */
function recordOrigins(value: unknown, path: PathSegment[], origins: WeakMap<object, string>): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      if (typeof item === 'object' && item !== null) origins.set(item, formatIssuePath([...path, index]));
      recordOrigins(item, [...path, index], origins);
    });
  } else if (isObject(value)) {
    // Interface files and free-form objects hold no lists that repairs reach.
    for (const [key, item] of Object.entries(value)) if (key !== 'files' && typeof item === 'object' && item !== null) recordOrigins(item, [...path, key], origins);
  }
}

function at(world: Json, path: readonly PathSegment[]): unknown {
  let value: unknown = world;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PathSegment, unknown>)[segment];
  }
  return value;
}

const slug = (text: string) =>
  text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

function uniqueIn(list: unknown[], candidate: string, self: unknown): string {
  const taken = new Set(list.filter((item) => item !== self && isObject(item) && typeof item.id === 'string').map((item) => (item as Json).id as string));
  let id = candidate;
  for (let n = 2; taken.has(id); n++) id = `${candidate}-${n}`;
  return id;
}

/** Lists whose item ids must match the kebab/snake pattern (the others take any text). */
const PATTERN_ID_LISTS = new Set(['entries', 'variables', 'audioTracks']);

export interface RepairOutcome {
  ok: boolean;
  /** Issues left when no repair reaches them (at the root of the world). */
  issues: { path: string; message: string }[];
}

export function repairWorld(world: Json, report: ReportBuilder): RepairOutcome {
  const origins = new WeakMap<object, string>();
  recordOrigins(world, [], origins);
  const originOf = (path: readonly PathSegment[]): string => {
    // The innermost object on the path that has a recorded origin, plus the rest of the path.
    for (let length = path.length; length > 0; length--) {
      const value = at(world, path.slice(0, length));
      if (typeof value === 'object' && value !== null) {
        const origin = origins.get(value);
        if (origin !== undefined) return origin + formatIssuePath(path.slice(length)).replace(/^(?=[A-Za-z_$])/, '.');
      }
    }
    return formatIssuePath(path);
  };

  for (let round = 0; round < MAX_ROUNDS; round++) {
    const issues = issuesOf(world);
    if (issues.length === 0) return { ok: true, issues: [] };
    const removals = new Map<unknown[], Map<number, string>>();
    const deletions: { parent: Json; key: string; where: string; message: string }[] = [];
    let changed = false;
    const seen = new Set<string>();

    for (const issue of issues) {
      const key = formatIssuePath(issue.path);
      if (seen.has(key)) continue;
      seen.add(key);
      if (repairInPlace(world, issue, report, originOf)) {
        changed = true;
        continue;
      }
      // Drop the innermost list item on the path; outside lists, the field itself.
      let dropped = false;
      for (let length = issue.path.length - 1; length >= 1; length--) {
        const segment = issue.path[length];
        const list = at(world, issue.path.slice(0, length));
        if (typeof segment === 'number' && Array.isArray(list)) {
          const reason = `${issue.message}${length + 1 < issue.path.length ? ` (at ${formatIssuePath(issue.path.slice(length + 1))})` : ''}`;
          const indexes = removals.get(list) ?? new Map<number, string>();
          if (!indexes.has(segment)) indexes.set(segment, `${originOf(issue.path.slice(0, length + 1))}\u0000${reason}`);
          removals.set(list, indexes);
          dropped = true;
          break;
        }
      }
      if (!dropped && issue.path.length >= 1) {
        const parent = at(world, issue.path.slice(0, -1));
        const field = issue.path[issue.path.length - 1];
        if (isObject(parent) && typeof field === 'string' && !(issue.path.length === 1 && ['name', 'version'].includes(field))) {
          deletions.push({ parent, key: field, where: originOf(issue.path), message: issue.message });
          dropped = true;
        }
      }
      if (!dropped) return { ok: false, issues: issues.map((left) => ({ path: formatIssuePath(left.path), message: left.message })) };
    }

    for (const { parent, key, where, message } of deletions) {
      if (!(key in parent)) continue;
      delete parent[key];
      report.dropped(where, `${message}; the field was left out (its default applies)`);
      changed = true;
    }
    for (const [list, indexes] of removals) {
      for (const index of [...indexes.keys()].sort((a, b) => b - a)) {
        const [where, reason] = indexes.get(index)!.split('\u0000') as [string, string];
        list.splice(index, 1);
        report.dropped(where, `could not be kept: ${reason}`);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const left = issuesOf(world);
  return { ok: left.length === 0, issues: left.map((issue) => ({ path: formatIssuePath(issue.path), message: issue.message })) };
}

/** The repairs with an obvious meaning; true when the world was changed. */
function repairInPlace(world: Json, issue: Issue, report: ReportBuilder, originOf: (path: readonly PathSegment[]) => string): boolean {
  const path = issue.path;
  const field = path[path.length - 1];
  const parentPath = path.slice(0, -1);
  const parent = at(world, parentPath);
  const value = at(world, path);
  const where = originOf(path);

  // The world's name.
  if (path.length === 1 && field === 'name') {
    const given = typeof value === 'string' ? value.trim() : '';
    world.name = given ? given.slice(0, 200) : IMPORTED_NAME;
    report.defaulted(where, given ? `cut to 200 characters (the validator's limit; was ${given.length})` : `missing or blank; "${IMPORTED_NAME}"`);
    return true;
  }
  if (!isObject(parent) || typeof field !== 'string') return false;

  // Texts over their limit: cut at the limit.
  if (issue.code === 'too_big' && issue.origin === 'string' && typeof value === 'string' && issue.maximum !== undefined) {
    parent[field] = cutAt(value, issue.maximum);
    report.converted(where, `cut to ${issue.maximum.toLocaleString('en')} characters, the validator's limit (was ${value.length.toLocaleString('en')}); the rest was left out`);
    return true;
  }
  // Numbers outside their bounds: the nearest bound.
  if ((issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'number' && typeof value === 'number' && Number.isFinite(value)) {
    const bound = issue.code === 'too_big' ? issue.maximum : issue.minimum;
    if (bound !== undefined) {
      parent[field] = bound;
      report.converted(where, `${value} is outside the validator's bounds; ${bound} used`);
      return true;
    }
  }

  const list = at(world, path.slice(0, -2));
  const index = path[path.length - 2];
  const listName = path[path.length - 3];

  // A variable's default that does not fit its type: the type's empty value.
  if (field === 'defaultValue' && listName === 'variables' && typeof parent.type === 'string') {
    const empty = { number: 0, string: '', boolean: false, json: {} }[parent.type as 'number'];
    if (empty !== undefined) {
      let fallback: unknown = empty;
      if (parent.type === 'number') {
        const min = typeof parent.min === 'number' ? parent.min : undefined;
        const max = typeof parent.max === 'number' ? parent.max : undefined;
        if (typeof value === 'number' && min !== undefined && value < min) fallback = min;
        else if (typeof value === 'number' && max !== undefined && value > max) fallback = max;
        else if (min !== undefined && 0 < min) fallback = min;
        else if (max !== undefined && 0 > max) fallback = max;
      }
      parent.defaultValue = fallback;
      report.converted(where, `${issue.message}; ${JSON.stringify(fallback)} used`);
      return true;
    }
  }
  // A field whose value does not fit but which has a default: the default.
  const itemSchema = schemaOf(path);
  if (itemSchema && field !== 'id' && value !== undefined) {
    const without = { ...parent, [field]: undefined };
    const check = itemSchema.safeParse(without);
    if (check.success || !check.error.issues.some((left) => left.path[0] === field)) {
      delete parent[field];
      const fallback = check.success ? (check.data as Json)[field] : undefined;
      report.converted(where, `${issue.message}; ${fallback === undefined ? 'left out' : `the default ${JSON.stringify(fallback)} is used`}`);
      return true;
    }
  }
  // An entry's section that is not one: as the older layout decides it (keywords → chat-history).
  if (field === 'section' && listName === 'entries') {
    const section = Array.isArray(parent.keywords) && parent.keywords.length > 0 ? 'chat-history' : 'system-presets';
    parent.section = section;
    report.converted(where, `${value === undefined ? 'missing' : `${JSON.stringify(value)} is not a section`}; "${section}" (${section === 'chat-history' ? 'it has keywords' : 'no keywords: always sent'})`);
    return true;
  }

  // A directive action without an id: derived from the rule's id and the action's position.
  if (field === 'directiveId' && value === undefined && (parent.type === 'inject-directive' || parent.type === 'remove-directive') && path[path.length - 3] === 'actions') {
    const rule = at(world, path.slice(0, -3));
    const ruleId = isObject(rule) && typeof rule.id === 'string' ? rule.id : 'rule';
    const id = `${slug(ruleId) || 'rule'}-directive-${String(index)}`;
    parent.directiveId = id;
    report.defaulted(where, `missing; "${id}" (from the rule's id and the action's position)`);
    return true;
  }
  // Ids: kebab-case where the pattern applies; a suffix for duplicates.
  if (field === 'id' && typeof value === 'string' && Array.isArray(list) && typeof listName === 'string') {
    if (issue.message.startsWith('duplicate id')) {
      const id = uniqueIn(list, value, parent);
      parent.id = id;
      report.converted(where, `duplicate id "${value}" → "${id}"`);
      return true;
    }
    if (PATTERN_ID_LISTS.has(listName) && !WORLD_ID_PATTERN.test(value)) {
      const id = uniqueIn(list, slug(value) || `${listName.replace(/s$/, '')}-${String(index)}`, parent);
      parent.id = id;
      report.converted(where, `"${value}" is not a kebab-case id → "${id}"${listName === 'variables' ? '; macros and directives that name the old id must be changed by hand' : ''}`);
      return true;
    }
  }
  // A missing name of a list item: its id.
  if (field === 'name' && value === undefined && Array.isArray(list)) {
    const name = typeof parent.id === 'string' && parent.id ? parent.id : `${String(listName)} ${String(index)}`;
    parent.name = name.slice(0, 200);
    report.defaulted(where, `missing; "${name.slice(0, 200)}"`);
    return true;
  }
  // A missing text (an entry's content, a notification's message): empty.
  if ((field === 'content' || field === 'message') && value === undefined && issue.code === 'invalid_type') {
    parent[field] = '';
    report.defaulted(where, 'missing; "" (empty)');
    return true;
  }
  return false;
}

/** The schema of the list item (or settings) that holds the field at `path`, when it has one. */
function schemaOf(path: readonly PathSegment[]): z.ZodType | null {
  const key = path
    .slice(0, -1)
    .map((segment) => (typeof segment === 'number' ? '#' : segment))
    .join('.');
  switch (key) {
    case 'entries.#':
      return entrySchema;
    case 'variables.#':
      return variableSchema;
    case 'rules.#':
      return ruleSchema;
    case 'rules.#.actions.#':
      return ruleActionSchema;
    case 'reactions.#':
      return reactionSchema;
    case 'audioTracks.#':
      return audioTrackSchema;
    case 'conditionalBGM.#':
      return conditionalBgmSchema;
    case 'settings':
      return settingsSchema;
    default:
      return null;
  }
}

/** Cuts at a length without splitting a surrogate pair. */
function cutAt(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, length - 1) : text.slice(0, length);
}
