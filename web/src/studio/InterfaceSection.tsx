import { useEffect, useMemo, useState } from 'react';
import { type SandboxHandlers, SandboxHost, type SandboxWorld } from '../sandbox/SandboxHost.tsx';
import { CodeEditor } from './CodeEditor.tsx';
import type { Obj } from './fields.tsx';

interface RootComponent {
  id: string;
  name: string;
  entryFile: string;
  files: Record<string, string>;
  updatedAt: string | number;
}

const STARTER = `export default function Screen() {
  const yumina = useYumina();
  return (
    <div className="p-4 space-y-2">
      <h1 className="text-xl font-bold">My world</h1>
      <p>{Object.keys(yumina.variables).length} variables</p>
    </div>
  );
}
`;

/** Previews never talk to the server: the interface sees the world's default variables and a greeting. */
const previewHandlers: SandboxHandlers = {};

/**
 * The interface section: the world's custom interface code in CodeMirror (one file at a time)
 * beside its live preview in the sandbox, rebuilt shortly after typing stops.
 */
export function InterfaceSection({ world, onChange }: { world: Obj; onChange(next: Obj): void }) {
  const root = (world.rootComponent ?? null) as RootComponent | null;
  const [file, setFile] = useState<string | null>(root?.entryFile ?? null);
  const [preview, setPreview] = useState<RootComponent | null>(root);
  useEffect(() => {
    const timer = setTimeout(() => setPreview(root), 600);
    return () => clearTimeout(timer);
  }, [root]);
  const variables = useMemo(
    () => Object.fromEntries(((world.variables ?? []) as { id: string; defaultValue: unknown }[]).map((v) => [v.id, v.defaultValue])),
    [world.variables],
  );
  if (!root) {
    return (
      <section id="studio-interface" className="card">
        <h3>Interface</h3>
        <p>This world plays in the standard chat screen. Add a custom interface to draw your own screen in code (TSX, with the world&apos;s variables).</p>
        <button
          type="button"
          onClick={() =>
            onChange({ ...world, rootComponent: { id: crypto.randomUUID(), name: 'Screen', entryFile: 'index.tsx', files: { 'index.tsx': STARTER }, updatedAt: new Date().toISOString() } })
          }
        >
          Add a custom interface
        </button>
      </section>
    );
  }
  const current = file && file in root.files ? file : root.entryFile;
  const setCode = (code: string) => onChange({ ...world, rootComponent: { ...root, files: { ...root.files, [current]: code }, updatedAt: new Date().toISOString() } });
  const sandboxWorld: SandboxWorld | null = preview ? ({ id: String(world.id ?? 'studio-preview'), name: String(world.name ?? ''), rootComponent: preview } as SandboxWorld) : null;
  return (
    <section id="studio-interface" className="card">
      <h3>Interface</h3>
      <div className="row">
        <label className="inline">
          File
          <select value={current} onChange={(e) => setFile(e.target.value)}>
            {Object.keys(root.files).map((f) => (
              <option key={f} value={f}>
                {f}
                {f === root.entryFile ? ' (entry)' : ''}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            const name = window.prompt('New file name (for example panel.tsx)');
            if (name && /^[\w.-]+\.(tsx|ts|jsx|js|css)$/.test(name) && !(name in root.files)) {
              onChange({ ...world, rootComponent: { ...root, files: { ...root.files, [name]: '' } } });
              setFile(name);
            }
          }}
        >
          Add file
        </button>
        <button
          type="button"
          className="link"
          onClick={() => {
            if (window.confirm('Remove the custom interface? The world goes back to the standard chat screen.')) onChange({ ...world, rootComponent: null });
          }}
        >
          Remove interface
        </button>
      </div>
      <div className="interface-split">
        <CodeEditor key={current} label={`Interface code: ${current}`} value={root.files[current] ?? ''} onChange={setCode} />
        <div className="interface-preview">
          <h4>Live preview</h4>
          {sandboxWorld && (
            <SandboxHost
              world={sandboxWorld}
              state={{ variables, sessionId: 'studio-preview', messages: [], entries: [], checkpoints: [] }}
              handlers={previewHandlers}
              title="Interface preview"
              className="sandbox-frame"
            />
          )}
        </div>
      </div>
    </section>
  );
}
