import { deepEqual, deleteAtPath, getAtPath, hasPrototypeSegment, isPlainObject, JsonPathError, setAtPath, withoutPrototypeKeys } from './json-path.ts';
import type { EngineVariable } from './world-types.ts';

export const OPERATIONS = ['set', 'add', 'subtract', 'multiply', 'toggle', 'append', 'merge', 'push', 'delete'] as const;
export type Operation = (typeof OPERATIONS)[number];

export function isOperation(word: string): word is Operation {
  return (OPERATIONS as readonly string[]).includes(word);
}

/**
 * An operand either as text written by the AI (`raw`, from a directive) or as a typed value
 * (from a rule action or reaction effect).
 */
export type Operand = { readonly raw: string } | { readonly value: unknown };

export type OperationResult = { ok: true; value: unknown } | { ok: false; reason: string };

const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function unquote(raw: string): string | undefined {
  const text = raw.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function fail(reason: string): OperationResult {
  return { ok: false, reason };
}

function asNumber(operand: Operand): OperationResult {
  if ('raw' in operand) {
    const text = (unquote(operand.raw) ?? operand.raw).trim();
    if (NUMBER_TEXT.test(text)) return { ok: true, value: Number(text) };
    return fail(`"${operand.raw.trim()}" is not a number`);
  }
  const { value } = operand;
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value };
  if (typeof value === 'string' && NUMBER_TEXT.test(value.trim())) return { ok: true, value: Number(value.trim()) };
  return fail(`${JSON.stringify(value)} is not a number`);
}

function asBoolean(operand: Operand): OperationResult {
  const value = 'raw' in operand ? (unquote(operand.raw) ?? operand.raw).trim() : operand.value;
  if (typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'true') return { ok: true, value: true };
    if (lower === 'false') return { ok: true, value: false };
  }
  return fail(`${JSON.stringify(value)} is not true or false`);
}

function asString(operand: Operand): OperationResult {
  if ('raw' in operand) return { ok: true, value: unquote(operand.raw) ?? operand.raw.trim() };
  const { value } = operand;
  if (typeof value === 'string') return { ok: true, value };
  if (typeof value === 'number' || typeof value === 'boolean') return { ok: true, value: String(value) };
  return fail(`${JSON.stringify(value)} is not text`);
}

const JSON_START = /^[[{"]|^-?\d|^(true|false|null)$/;

/** JSON text is parsed; bare words become strings; text that looks like JSON but is not is refused. */
function asJson(operand: Operand): OperationResult {
  if (!('raw' in operand)) return { ok: true, value: withoutPrototypeKeys(structuredClone(operand.value)) };
  const text = operand.raw.trim();
  if (JSON_START.test(text)) {
    try {
      return { ok: true, value: withoutPrototypeKeys(JSON.parse(text)) };
    } catch {
      if (/^[[{"]/.test(text)) return fail(`"${text}" is not valid JSON`);
    }
  }
  return { ok: true, value: text };
}

function clamp(variable: EngineVariable, value: number): number {
  let result = value;
  if (typeof variable.min === 'number' && result < variable.min) result = variable.min;
  if (typeof variable.max === 'number' && result > variable.max) result = variable.max;
  return result;
}

function numeric(current: unknown, operation: Operation, operand: Operand): OperationResult {
  const parsed = asNumber(operand);
  if (!parsed.ok) return parsed;
  const amount = parsed.value as number;
  const base = typeof current === 'number' ? current : current === undefined || current === null ? 0 : Number.NaN;
  if (Number.isNaN(base)) return fail(`cannot ${operation} a ${typeof current}`);
  const result = operation === 'set' ? amount : operation === 'add' ? base + amount : operation === 'subtract' ? base - amount : base * amount;
  if (!Number.isFinite(result)) return fail(`${operation} gives a number out of range`);
  return { ok: true, value: result };
}

/** What kind of value sits at the target: decides which operations apply. */
type Kind = 'number' | 'boolean' | 'string' | 'json';

function kindOf(variable: EngineVariable, targetValue: unknown, hasPath: boolean): Kind {
  if (!hasPath) return variable.type;
  if (typeof targetValue === 'number') return 'number';
  if (typeof targetValue === 'boolean') return 'boolean';
  if (typeof targetValue === 'string') return 'string';
  return 'json';
}

const ALLOWED: Record<Kind, readonly Operation[]> = {
  number: ['set', 'add', 'subtract', 'multiply'],
  boolean: ['set', 'toggle'],
  string: ['set', 'append'],
  json: ['set', 'merge', 'push', 'delete'],
};

function operateOnTarget(kind: Kind, target: unknown, operation: Operation, operand: Operand, hasPath: boolean): OperationResult {
  // On a JSON path that does not exist yet, numbers may still be added to (from 0).
  const allowed = hasPath && target === undefined ? [...ALLOWED.json, 'add', 'subtract', 'multiply', 'append'] : ALLOWED[kind];
  if (!allowed.includes(operation)) return fail(`${operation} does not apply to a ${kind} value`);
  switch (operation) {
    case 'set':
      if (kind === 'number') return numeric(target, 'set', operand);
      if (kind === 'boolean') return asBoolean(operand);
      if (kind === 'string') return asString(operand);
      return asJson(operand);
    case 'add':
    case 'subtract':
    case 'multiply':
      return numeric(target, operation, operand);
    case 'toggle':
      return { ok: true, value: !target };
    case 'append': {
      const text = asString(operand);
      if (!text.ok) return text;
      return { ok: true, value: `${typeof target === 'string' ? target : ''}${text.value as string}` };
    }
    case 'merge': {
      const patch = asJson(operand);
      if (!patch.ok) return patch;
      if (!isPlainObject(patch.value)) return fail('merge needs a JSON object');
      if (target !== undefined && target !== null && !isPlainObject(target)) return fail('merge applies to an object');
      return { ok: true, value: { ...((target as Record<string, unknown> | null | undefined) ?? {}), ...patch.value } };
    }
    case 'push': {
      const item = asJson(operand);
      if (!item.ok) return item;
      if (target !== undefined && target !== null && !Array.isArray(target)) return fail('push applies to an array');
      return { ok: true, value: [...((target as unknown[] | null | undefined) ?? []), item.value] };
    }
    case 'delete': {
      const keyText = 'raw' in operand ? (unquote(operand.raw) ?? operand.raw.trim()) : operand.value;
      if (Array.isArray(target)) {
        if (typeof keyText === 'number' || (typeof keyText === 'string' && /^\d+$/.test(keyText))) {
          const index = Number(keyText);
          if (index >= target.length) return fail(`no index ${index}`);
          return { ok: true, value: target.filter((_, position) => position !== index) };
        }
        const found = target.findIndex((item) => deepEqual(item, keyText));
        if (found < 0) return fail(`${JSON.stringify(keyText)} is not in the array`);
        return { ok: true, value: target.filter((_, position) => position !== found) };
      }
      if (isPlainObject(target)) {
        const key = String(keyText);
        try {
          return { ok: true, value: deleteAtPath(target, key.split('.')) };
        } catch (error) {
          return fail((error as Error).message);
        }
      }
      return fail('delete applies to an object or array');
    }
  }
}

/**
 * Applies one operation to a variable's current value (optionally at a JSON dot path) and
 * returns the new whole value, or the reason it does not apply. Never mutates `current`.
 */
export function applyOperation(
  variable: EngineVariable,
  current: unknown,
  path: readonly string[],
  operation: Operation,
  operand: Operand,
): OperationResult {
  const hasPath = path.length > 0;
  if (hasPrototypeSegment(path)) return fail(`"${path.join('.')}" names a prototype key; nothing was changed`);
  if (hasPath && variable.type !== 'json') return fail(`"${variable.id}" is a ${variable.type} and has no fields`);
  const target = hasPath ? getAtPath(current, path) : current;
  const result = operateOnTarget(kindOf(variable, target, hasPath), target, operation, operand, hasPath);
  if (!result.ok) return result;
  if (!hasPath) {
    return variable.type === 'number' ? { ok: true, value: clamp(variable, result.value as number) } : result;
  }
  try {
    return { ok: true, value: setAtPath(current, path, result.value) };
  } catch (error) {
    if (error instanceof JsonPathError) return fail(error.message);
    throw error;
  }
}
