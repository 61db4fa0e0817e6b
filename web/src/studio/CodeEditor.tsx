import { javascript } from '@codemirror/lang-javascript';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

/**
 * CodeMirror 6 for a world's interface code (TSX): line numbers, brackets, search, undo history,
 * indentation with Tab kept inside the editor only while it has focus (Escape then Tab leaves it).
 * The editor is labelled for assistive technology; the text is owned by the caller.
 */
export function CodeEditor({ value, onChange, label }: { value: string; onChange(next: string): void; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changeRef = useRef(onChange);
  changeRef.current = onChange;
  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      doc: value,
      extensions: [
        basicSetup,
        javascript({ jsx: true, typescript: true }),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) changeRef.current(u.state.doc.toString());
        }),
      ],
    });
    view.current = v;
    return () => v.destroy();
    // The editor is created once per file; later outside changes are applied below.
  }, [label]);
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);
  return <div className="code-editor" ref={host} data-testid="code-editor" />;
}
