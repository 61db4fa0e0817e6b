/** Dot paths into JSON values: `root.nested.field`, `items.0.name`. */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

const INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * Segments that would reach an object's prototype (`__proto__`, `constructor`, `prototype`). A
 * path with one of them is never read or written: it changes nothing.
 */
const PROTOTYPE_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

export function hasPrototypeSegment(segments: readonly string[]): boolean {
  return segments.some((segment) => PROTOTYPE_SEGMENTS.has(segment));
}

/** A copy of a parsed JSON value without own `__proto__` keys (JSON.parse creates them as own keys). */
export function withoutPrototypeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPrototypeKeys);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (key !== '__proto__') out[key] = withoutPrototypeKeys(item);
  return out;
}

export function getAtPath(root: unknown, segments: readonly string[]): unknown {
  if (hasPrototypeSegment(segments)) return undefined;
  let current = root;
  for (const segment of segments) {
    if (Array.isArray(current) && INDEX.test(segment)) current = current[Number(segment)];
    else if (isPlainObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

export class JsonPathError extends Error {
  readonly code = 'WORLD_JSON_PATH';
}

/**
 * Returns a copy of `root` with `value` stored at `segments`; missing intermediate objects are
 * created (an array when the next segment is a numeric index). Refuses to walk through scalars.
 */
export function setAtPath(root: unknown, segments: readonly string[], value: unknown): unknown {
  if (segments.length === 0) return value;
  if (hasPrototypeSegment(segments)) throw new JsonPathError(`"${segments.join('.')}" names a prototype key; nothing was changed`);
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(root)) {
    if (!INDEX.test(head)) throw new JsonPathError(`"${head}" is not an index into an array`);
    const copy = [...root];
    const index = Number(head);
    if (index > copy.length) throw new JsonPathError(`index ${index} is past the end of the array`);
    copy[index] = setAtPath(copy[index], rest, value);
    return copy;
  }
  if (root === undefined || root === null) {
    const created: unknown = INDEX.test(head) && head === '0' ? [] : {};
    return setAtPath(created, segments, value);
  }
  if (!isPlainObject(root)) throw new JsonPathError(`cannot set "${head}" inside a ${typeof root}`);
  const child = Object.hasOwn(root, head) ? root[head] : undefined;
  return { ...root, [head]: setAtPath(child, rest, value) };
}

/** Removes the key or index at `segments`; a missing path is an error. */
export function deleteAtPath(root: unknown, segments: readonly string[]): unknown {
  if (segments.length === 0) throw new JsonPathError('nothing to delete');
  if (hasPrototypeSegment(segments)) throw new JsonPathError(`"${segments.join('.')}" names a prototype key; nothing was changed`);
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(root)) {
    if (!INDEX.test(head) || Number(head) >= root.length) throw new JsonPathError(`no index "${head}"`);
    const index = Number(head);
    if (rest.length === 0) return root.filter((_, position) => position !== index);
    const copy = [...root];
    copy[index] = deleteAtPath(copy[index], rest);
    return copy;
  }
  if (!isPlainObject(root) || !Object.hasOwn(root, head)) throw new JsonPathError(`no key "${head}"`);
  if (rest.length === 0) {
    const { [head]: _removed, ...remaining } = root;
    return remaining;
  }
  return { ...root, [head]: deleteAtPath(root[head], rest) };
}

export function deepEqual(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true;
  if (Array.isArray(left)) {
    return Array.isArray(right) && left.length === right.length && left.every((item, index) => deepEqual(item, right[index]));
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const leftKeys = Object.keys(left);
    if (leftKeys.length !== Object.keys(right).length) return false;
    return leftKeys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
  }
  return false;
}
