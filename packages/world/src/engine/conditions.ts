import { deepEqual, getAtPath, isPlainObject } from './json-path.ts';
import type { ConditionLogic, EngineCondition } from './world-types.ts';

const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A variable's value by id, or by `id.path` into a JSON variable. */
export function readVariable(variables: Readonly<Record<string, unknown>>, reference: string): unknown {
  if (Object.hasOwn(variables, reference)) return variables[reference];
  const dot = reference.indexOf('.');
  if (dot < 0) return undefined;
  return getAtPath(variables[reference.slice(0, dot)], reference.slice(dot + 1).split('.'));
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && NUMBER_TEXT.test(value.trim())) return Number(value.trim());
  return undefined;
}

function looselyEqual(actual: unknown, expected: unknown): boolean {
  if (deepEqual(actual, expected)) return true;
  if (typeof actual === 'number') return toNumber(expected) === actual;
  if (typeof actual === 'boolean' && typeof expected === 'string') return expected.toLowerCase() === String(actual);
  if (typeof actual === 'string' && (typeof expected === 'number' || typeof expected === 'boolean')) return actual === String(expected);
  return false;
}

function contains(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'string') return actual.toLowerCase().includes(String(expected).toLowerCase());
  if (Array.isArray(actual)) {
    return actual.some((item) =>
      typeof item === 'string' && typeof expected === 'string' ? item.toLowerCase() === expected.toLowerCase() : looselyEqual(item, expected),
    );
  }
  if (isPlainObject(actual)) return typeof expected === 'string' && Object.hasOwn(actual, expected);
  return false;
}

/**
 * eq/neq compare loosely (a number variable equals "5"); gt/lt/gte/lte need numbers on both
 * sides; contains is a case-insensitive substring for text, membership for arrays and key
 * presence for objects.
 */
export function conditionHolds(condition: EngineCondition, variables: Readonly<Record<string, unknown>>): boolean {
  const actual = readVariable(variables, condition.variableId);
  const expected = condition.value;
  switch (condition.operator) {
    case 'eq':
      return looselyEqual(actual, expected);
    case 'neq':
      return !looselyEqual(actual, expected);
    case 'contains':
      return contains(actual, expected);
    default: {
      const left = toNumber(actual);
      const right = toNumber(expected);
      if (left === undefined || right === undefined) return false;
      if (condition.operator === 'gt') return left > right;
      if (condition.operator === 'lt') return left < right;
      if (condition.operator === 'gte') return left >= right;
      return left <= right;
    }
  }
}

/** No conditions always hold; `all` (default) needs every one, `any` at least one. */
export function conditionsHold(
  conditions: readonly EngineCondition[] | undefined,
  logic: ConditionLogic | undefined,
  variables: Readonly<Record<string, unknown>>,
): boolean {
  if (!conditions || conditions.length === 0) return true;
  return logic === 'any'
    ? conditions.some((condition) => conditionHolds(condition, variables))
    : conditions.every((condition) => conditionHolds(condition, variables));
}
