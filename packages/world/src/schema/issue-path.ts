/**
 * Issue paths are written in the readable JavaScript form, the same one a reader would type to
 * reach the value: `entries[3].keywords[0]`, `settings.temperature`, `rootComponent.files["index.tsx"]`.
 * Array indexes are in brackets, identifier-like keys follow a dot, any other key is a quoted
 * string in brackets. The world itself (the root) is the empty path "".
 */
export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function formatIssuePath(segments: readonly PathSegment[]): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

/** Reads `entries[3].keywords[0]`-style paths back into segments (the inverse of formatIssuePath). */
export function parseIssuePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  const pattern = /\.([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  let offset = 0;
  const head = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(path);
  if (head) {
    segments.push(head[0]);
    offset = head[0].length;
  } else if (path.startsWith('.')) {
    throw new SyntaxError(`not an issue path: ${path}`);
  }
  while (offset < path.length) {
    pattern.lastIndex = offset;
    const match = pattern.exec(path);
    if (!match) throw new SyntaxError(`not an issue path: ${path}`);
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else if (match[3] !== undefined) segments.push(JSON.parse(match[3]) as string);
    offset = pattern.lastIndex;
  }
  return segments;
}
