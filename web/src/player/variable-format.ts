/** A variable as the player reads it: its display name and its value formatted, not raw JSON. */
import type { WorldVariable } from './player-types.ts';

export function displayName(variable: WorldVariable | undefined, id: string): string {
  return variable?.name?.trim() || id;
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toLocaleString(undefined, { maximumFractionDigits: 2 });
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length ? value.map(formatValue).join(', ') : 'none';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length ? entries.map(([k, v]) => `${k}: ${formatValue(v)}`).join('; ') : 'none';
  }
  return String(value);
}
