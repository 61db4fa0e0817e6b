import { describe, expect, it } from 'vitest';
import { formatIssuePath, parseIssuePath } from './issue-path.ts';

describe('issue paths', () => {
  it.each([
    [[], ''],
    [['name'], 'name'],
    [['entries', 3, 'keywords', 0], 'entries[3].keywords[0]'],
    [['settings', 'temperature'], 'settings.temperature'],
    [['rootComponent', 'files', 'index.tsx'], 'rootComponent.files["index.tsx"]'],
    [['customTagColors', '地点'], 'customTagColors["地点"]'],
    [['customTagColors', 'a "quoted" tag'], 'customTagColors["a \\"quoted\\" tag"]'],
  ] as const)('%j ⇄ %s', (segments, text) => {
    expect(formatIssuePath(segments)).toBe(text);
    expect(parseIssuePath(text)).toEqual(segments);
  });

  it('refuses text that is not a path', () => {
    expect(() => parseIssuePath('entries[x]')).toThrow(SyntaxError);
    expect(() => parseIssuePath('.name')).toThrow(SyntaxError);
  });
});
