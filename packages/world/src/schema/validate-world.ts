import type { z } from 'zod';
import { formatIssuePath, type PathSegment } from './issue-path.ts';
import { checkWorldReferences, type RawFinding } from './world-references.ts';
import { type WorldDefinition, worldDefinitionSchema } from './world-schema.ts';
import { checkWorldVersion } from './world-version.ts';

/** One problem with a world: where it is (see issue-path.ts for the path form) and what is wrong, in plain words. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** Something accepted but worth telling the author (a stripped unknown field, a rule that can never fire). */
export type ValidationWarning = ValidationIssue;

export type WorldValidation =
  | { readonly ok: true; readonly world: WorldDefinition; readonly warnings: ValidationWarning[] }
  | { readonly ok: false; readonly issues: ValidationIssue[] };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeInput(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return Number.isInteger(value) ? `the number ${value}` : `the number ${value}`;
  if (typeof value === 'boolean') return `the boolean ${value}`;
  return `an ${typeof value}`;
}

const EXPECTED_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'a list',
  null: 'null',
};

function sizeWord(origin: unknown, amount: number | bigint): string {
  if (origin === 'string') return `${amount} character${amount === 1 ? '' : 's'}`;
  if (origin === 'array' || origin === 'set') return `${amount} item${amount === 1 ? '' : 's'}`;
  return String(amount);
}

function quoteList(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(', ');
}

/** Turns a zod issue into one plain sentence (zod's own wording is terse and technical). */
export function plainMessage(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type': {
      if (input === undefined) return 'is required';
      const expected = EXPECTED_NAMES[issue.expected] ?? issue.expected;
      if (issue.expected === 'int' && typeof input === 'number') return `must be a whole number, not ${input}`;
      if (issue.expected === 'number' && typeof input === 'number') return `must be a finite number, not ${input}`;
      return `must be ${expected}, not ${describeInput(input)}`;
    }
    case 'too_small': {
      if (issue.origin === 'number') return `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}, not ${String(input)}`;
      return `must have at least ${sizeWord(issue.origin, issue.minimum)}`;
    }
    case 'too_big': {
      if (issue.origin === 'number') return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}, not ${String(input)}`;
      return `must have at most ${sizeWord(issue.origin, issue.maximum)}`;
    }
    case 'invalid_value':
      if (input === undefined) return `is required: ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${quoteList(issue.values)}`}`;
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}, not ${describeInput(input)}`
        : `must be one of ${quoteList(issue.values)}, not ${describeInput(input)}`;
    case 'invalid_union': {
      const options = (issue as { options?: readonly unknown[] }).options;
      const discriminator = (issue as { discriminator?: string }).discriminator;
      if ((issue as { note?: string }).note === 'No matching discriminator' && options) {
        // zod reports the whole object as the input; the path already points at the discriminator.
        const value = discriminator !== undefined && isObject(input) ? input[discriminator] : input;
        return value === undefined ? `is required: one of ${quoteList(options)}` : `must be one of ${quoteList(options)}, not ${describeInput(value)}`;
      }
      if (input === undefined) return 'is required';
      return `must be ${issue.errors
        .map((branch) => branch[0])
        .filter((first): first is z.core.$ZodIssue => first !== undefined && first.code === 'invalid_type')
        .map((first) => EXPECTED_NAMES[(first as { expected: string }).expected] ?? (first as { expected: string }).expected)
        .join(' or ') || 'a value of another shape'}, not ${describeInput(input)}`;
    }
    case 'invalid_format':
      if (issue.format === 'regex' || issue.message.startsWith('must')) return issue.message;
      return `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return `has unknown field${issue.keys.length === 1 ? '' : 's'} ${quoteList(issue.keys)}`;
    default:
      return issue.message;
  }
}

/**
 * Reports fields the schema dropped: anything in the input that the normalized world lacks.
 * A variable's `category` is dropped silently (seed 002 §2.4: authoring tools send it).
 */
function strippedFields(raw: unknown, parsed: unknown, path: PathSegment[], warnings: ValidationWarning[]): void {
  if (Array.isArray(raw) && Array.isArray(parsed)) {
    raw.forEach((item, index) => {
      strippedFields(item, parsed[index], [...path, index], warnings);
    });
    return;
  }
  if (!isObject(raw) || !isObject(parsed)) return;
  const isVariable = path.length === 2 && path[0] === 'variables';
  for (const key of Object.keys(raw)) {
    if (key in parsed) {
      strippedFields(raw[key], parsed[key], [...path, key], warnings);
    } else if (!(isVariable && key === 'category') && raw[key] !== undefined) {
      warnings.push({ path: formatIssuePath([...path, key]), message: 'is not a field of WorldDefinition 20.0.0 and was removed' });
    }
  }
}

/** Folders, components, custom UI and the custom interface are returned exactly as given (keys, order, unknown fields). */
const VERBATIM_FIELDS = ['rootComponent', 'components', 'customUI', 'entryFolders'] as const;

function toIssue(finding: RawFinding): ValidationIssue {
  return { path: formatIssuePath(finding.path), message: finding.message };
}

/**
 * Validates and normalizes a WorldDefinition 20.0.0.
 *
 * On success the world has every default filled in (seed 002 §2, issue 8), unknown fields of plain
 * objects removed (each reported as a warning) and folders, components, custom UI and the custom
 * interface kept byte for byte. On failure every problem is listed, structural and referential,
 * each with its path (`entries[3].keywords`, root = "") and a plain message. An older, newer or
 * missing `version` is always an issue with an explanation; it never passes silently.
 */
export function validateWorld(input: unknown): WorldValidation {
  if (!isObject(input)) {
    return { ok: false, issues: [{ path: '', message: `a world must be a JSON object, not ${describeInput(input)}` }] };
  }
  const issues: ValidationIssue[] = [];
  const version = checkWorldVersion(input.version);
  if (version.status !== 'current') issues.push({ path: 'version', message: version.message ?? 'is not supported' });

  const parsed = worldDefinitionSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.path[0] === 'version' && issue.path.length === 1) continue;
      issues.push({ path: formatIssuePath(issue.path.filter((segment): segment is PathSegment => typeof segment !== 'symbol')), message: plainMessage(issue) });
    }
  }
  const references = checkWorldReferences(input);
  issues.push(...references.issues.map(toIssue));

  if (issues.length > 0 || !parsed.success) {
    const seen = new Set<string>();
    return {
      ok: false,
      issues: issues.filter((issue) => {
        const key = `${issue.path}\u0000${issue.message}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      }),
    };
  }

  const world = parsed.data;
  const verbatim = world as Record<string, unknown>;
  for (const field of VERBATIM_FIELDS) {
    if (input[field] !== undefined) verbatim[field] = structuredClone(input[field]);
  }
  const warnings: ValidationWarning[] = [];
  strippedFields(input, world, [], warnings);
  warnings.push(...references.warnings.map(toIssue));
  return { ok: true, world, warnings };
}

/** validateWorld for callers that want an exception: throws WorldValidationError listing every issue. */
export function parseWorld(input: unknown): WorldDefinition {
  const result = validateWorld(input);
  if (!result.ok) throw new WorldValidationError(result.issues);
  return result.world;
}

export class WorldValidationError extends Error {
  readonly code = 'WORLD_INVALID';
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[]) {
    const first = issues[0];
    super(
      `the world is not valid (${issues.length} issue${issues.length === 1 ? '' : 's'})${first ? `: ${first.path || '(world)'} ${first.message}` : ''}`,
    );
    this.name = 'WorldValidationError';
    this.issues = issues;
  }
}
