import { describe, expect, it } from 'vitest';
import { lineDiff, withContext } from './line-diff.ts';

const render = (before: string, after: string) => lineDiff(before, after).map((l) => `${l.op === 'add' ? '+' : l.op === 'del' ? '-' : ' '}${l.text}`);

describe('lineDiff', () => {
  it('marks removed and added lines and keeps the common ones in order', () => {
    expect(render('a\nb\nc\nd', 'a\nc\nx\nd')).toEqual([' a', '-b', ' c', '+x', ' d']);
  });
  it('identical texts are all unchanged; an empty side is all added or all removed', () => {
    expect(render('a\nb', 'a\nb')).toEqual([' a', ' b']);
    expect(render('', 'a\nb')).toEqual(['+a', '+b']);
    expect(render('a', '')).toEqual(['-a']);
  });
  it('beyond the limit the middle is removed then added, with the head and tail still shared', () => {
    const d = lineDiff('h\n1\n2\nt', 'h\n3\n4\nt', 1).map((l) => l.op);
    expect(d).toEqual(['same', 'del', 'del', 'add', 'add', 'same']);
  });
  it('withContext folds long unchanged runs into one gap', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
    const after = before.replace('l10', 'changed');
    const shown = withContext(lineDiff(before, after), 1).map((l) => l.op);
    expect(shown).toEqual(['gap', 'same', 'del', 'add', 'same', 'gap']);
  });
});
