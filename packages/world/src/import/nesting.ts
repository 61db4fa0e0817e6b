import type { PathSegment } from '../schema/issue-path.ts';

/**
 * How deep an imported file may nest objects and arrays: the same bound as a JSON request body
 * (@yumina/http's JSON_MAX_DEPTH). A world nests about six levels; a card wraps it in four or five.
 */
export const IMPORT_MAX_DEPTH = 64;

interface Frame {
  value: object;
  depth: number;
  parent: Frame | null;
  key: PathSegment | null;
}

const pathOf = (frame: Frame): PathSegment[] => {
  const path: PathSegment[] = [];
  for (let at: Frame | null = frame; at && at.key !== null; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * The path of the first object or array nested deeper than `limit` levels (the root is level 1),
 * or null. Walks with a stack of its own, never the call stack, so no input can overflow it: every
 * recursive walk over imported data (text cleaning, conversion, repair, validation, the card kept
 * for export) runs only on data this has bounded.
 */
export function tooDeepPath(value: unknown, limit = IMPORT_MAX_DEPTH): PathSegment[] | null {
  if (typeof value !== 'object' || value === null) return null;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: null }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > limit) return pathOf(frame);
    const entries: [PathSegment, unknown][] = Array.isArray(frame.value) ? frame.value.map((item, index) => [index, item]) : Object.entries(frame.value);
    // Pushed last to first, so the walk visits the file in its order and names the first deep path.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return null;
}
