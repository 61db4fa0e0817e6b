import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The browser entry must not pull Node built-ins, jose or zod into a page bundle. */

const here = dirname(fileURLToPath(import.meta.url));
// Runtime imports and re-exports only: `import type` / `export type` are erased.
const SPECIFIER = /^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+'([^']+)'/gm;

function runtimeGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(join(here, file), 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1]!;
      if (specifier.startsWith('./')) visit(specifier.slice(2));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('browser entry', () => {
  it('imports no Node built-ins, jose or zod at runtime', () => {
    const { files, packages } = runtimeGraph('browser.ts');
    expect(files).toContain('bridge-controller.ts');
    expect(files).toContain('frame-client.ts');
    expect(files).not.toContain('signing-keys.ts');
    expect([...packages]).toEqual([]);
  });

  it('the full entry does reach the Node-only parts (the scan sees real imports)', () => {
    const { files, packages } = runtimeGraph('index.ts');
    expect(files).toContain('signing-keys.ts');
    expect(packages).toContain('jose');
    expect(packages).toContain('node:crypto');
  });
});
