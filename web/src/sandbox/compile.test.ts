import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CompileError, classCandidates, compileRootComponent } from './compile.ts';
import { buildFrameDocument, framePolicy } from './frame-document.ts';

const root = {
  entryFile: './index.tsx',
  files: {
    'index.tsx': `import { Hud } from './hud';\nimport { Chat } from '@yumina/ui';\nexport default function Screen(): JSX.Element { const label: string = '</script><!--'; return <div className="flex max-w-[75%]"><Hud /><Chat />{label}</div>; }`,
    'hud.tsx': `export function Hud() { return <>{'hud'}</>; }`,
    'notes.md': '# not code',
  },
};

describe('compiling a rootComponent in the parent', () => {
  it('turns every source file into a factory inside one __yuminaDefine call', () => {
    const { script, entryFile } = compileRootComponent(root);
    expect(entryFile).toBe('index.tsx');
    expect(script.startsWith('__yuminaDefine({')).toBe(true);
    expect(script).toContain('"index.tsx": function (module, exports, require, location)');
    expect(script).toContain('"hud.tsx": function');
    expect(script).not.toContain('notes.md');
    expect(script).toContain("require('./hud')");
    expect(script).toContain('React.createElement');
    expect(script).not.toContain(': string');
    // nothing in the text can close the inline script element
    expect(script).not.toMatch(/<\/script/i);
    expect(script).not.toContain('<!--');
  });

  it('reports a missing entry file and syntax errors with the file name', () => {
    expect(() => compileRootComponent({ entryFile: 'main.tsx', files: { 'index.tsx': 'export default 1' } })).toThrow(CompileError);
    try {
      compileRootComponent({ entryFile: 'index.tsx', files: { 'index.tsx': 'export default function () { return <div> }' } });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CompileError);
      expect((error as CompileError).file).toBe('index.tsx');
    }
  });

  it('collects utility class candidates from the source', () => {
    const candidates = classCandidates(root);
    expect(candidates).toContain('flex');
    expect(candidates).toContain('max-w-[75%]');
  });
});

describe('the frame document', () => {
  it('admits exactly its two scripts by hash, with no eval and no network', async () => {
    const html = await buildFrameDocument({
      runtime: 'console.log("runtime </script>")',
      modules: '__yuminaDefine({})',
      css: '.flex{display:flex}',
      assetOrigin: 'https://assets.example/some/path',
      boot: {
        channel: 'c',
        parentOrigin: 'https://app.example',
        worldId: 'w',
        worldName: '</script><script>alert(1)</script>',
        entryFile: 'index.tsx',
        assetOrigin: 'https://assets.example',
        href: 'https://app.example/play/w',
        storage: { local: {}, session: {} },
      },
    });
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(2);
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!.replace(/&quot;/g, '"');
    for (const script of scripts) {
      const hash = createHash('sha256').update(script, 'utf8').digest('base64');
      expect(csp).toContain(`'sha256-${hash}'`);
    }
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src https://assets.example data: blob:');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    // the boot JSON cannot break out of its element
    expect(html.match(/<script/g)).toHaveLength(3);
  });

  it('puts the asset origin (only its origin) into the media directives', () => {
    const policy = framePolicy(["'sha256-x'"], 'https://cdn.example:8443/a/b');
    expect(policy).toContain('font-src https://cdn.example:8443 data:');
    expect(policy).toContain('media-src https://cdn.example:8443 blob:');
    expect(policy).toContain("script-src 'sha256-x'");
  });
});
