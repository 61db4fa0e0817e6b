import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = new URL('.', import.meta.url).pathname;
const sources = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('packages/companion stays pure and browser-safe', () => {
  it.each(sources)('%s uses no Node built-ins, environment, clock or global randomness', (file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    expect(text).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/);
    expect(text).not.toMatch(/Date\.now\(|new Date\(|performance\.now\(|Math\.random\(/);
    for (const m of text.matchAll(/from ['"]([^'"]+)['"]/g)) expect(['zod'].includes(m[1]!) || m[1]!.startsWith('./')).toBe(true);
  });
});
