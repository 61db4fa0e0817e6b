import { describe, expect, it } from 'vitest';
import { displayName, formatValue } from './variable-format.ts';

describe('variables as the player reads them', () => {
  it('uses the display name, else the id', () => {
    expect(displayName({ id: 'hp', name: 'Health' }, 'hp')).toBe('Health');
    expect(displayName(undefined, 'hp')).toBe('hp');
  });
  it('formats values instead of showing JSON', () => {
    expect(formatValue(true)).toBe('Yes');
    expect(formatValue(2.345)).toBe('2.35');
    expect(formatValue({ items: ['torch', 'rope'] })).toBe('items: torch, rope');
    expect(formatValue([])).toBe('none');
    expect(formatValue(null)).toBe('—');
  });
});
