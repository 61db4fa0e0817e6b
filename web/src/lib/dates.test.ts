import { describe, expect, it } from 'vitest';
import { shortDate, shortDateTime } from './dates.ts';

describe('dates as the app shows them', () => {
  it('formats the local date and time, day first, in English', () => {
    const at = new Date(2026, 10, 27, 9, 5);
    expect(shortDate(at.toISOString())).toBe('27 Nov 2026');
    expect(shortDateTime(at.toISOString())).toBe('27 Nov 2026, 09:05');
    expect(shortDate(new Date(2025, 0, 3))).toBe('3 Jan 2025');
  });
  it('gives back what it cannot read', () => {
    expect(shortDate('not a date')).toBe('not a date');
    expect(shortDateTime('')).toBe('');
  });
});
