import { useEffect, useState } from 'react';

/**
 * Small declarative forms for the simple mode: each object of the world is edited through a list
 * of field specs. Every input carries `data-path` (the validator's path form, such as
 * `entries[3].keywords`) so an issue shown in advanced mode can jump to its field here.
 */
export type Obj = Record<string, unknown>;

export type FieldSpec =
  | { key: string; label: string; kind: 'text' | 'textarea' | 'number' | 'optional-number' | 'nullable-number' | 'checkbox' | 'list' | 'json' }
  | { key: string; label: string; kind: 'select'; options: readonly string[]; optional?: boolean }
  | { key: string; label: string; kind: 'object'; fields: (value: Obj) => FieldSpec[]; nullable?: boolean; create?: () => Obj }
  | { key: string; label: string; kind: 'array'; item: (value: Obj) => FieldSpec[]; create: () => Obj; itemLabel: (value: Obj, index: number) => string };

export const childPath = (base: string, key: string | number) => (typeof key === 'number' ? `${base}[${key}]` : base ? `${base}.${key}` : key);

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** A comma-separated list input that keeps what is being typed (a trailing comma) until it parses. */
function ListInput({ value, path, label, onChange }: { value: unknown; path: string; label: string; onChange(v: string[]): void }) {
  const list = Array.isArray(value) ? value.map(String) : [];
  const [text, setText] = useState(list.join(', '));
  const joined = list.join('\u0000');
  // Note: only external changes of the list reset the text
  useEffect(() => {
    const parsed = text.split(',').map((s) => s.trim()).filter(Boolean);
    if (parsed.join('\u0000') !== joined) setText(joined ? joined.split('\u0000').join(', ') : '');
  }, [joined]);
  return (
    <input
      aria-label={label}
      data-path={path}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        onChange(e.target.value.split(',').map((s) => s.trim()).filter(Boolean));
      }}
    />
  );
}

/** A JSON value input: any JSON (10, "text", true, {"a":1}); invalid text is kept but not applied. */
function JsonInput({ value, path, label, onChange }: { value: unknown; path: string; label: string; onChange(v: unknown): void }) {
  const shown = value === undefined ? '' : JSON.stringify(value);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState(false);
  // Note: only external changes reset the text
  useEffect(() => {
    let same = false;
    try {
      same = text !== '' && JSON.stringify(JSON.parse(text)) === shown;
    } catch {}
    if (!same && !(text === '' && value === undefined)) setText(shown);
  }, [shown]);
  return (
    <span className="json-input">
      <input
        aria-label={label}
        aria-invalid={bad}
        data-path={path}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === '') {
            setBad(false);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(e.target.value));
            setBad(false);
          } catch {
            setBad(true);
          }
        }}
      />
      {bad && <span className="error"> not valid JSON yet</span>}
    </span>
  );
}

export function Fields({ value, specs, path, onChange }: { value: Obj; specs: FieldSpec[]; path: string; onChange(next: Obj): void }) {
  const set = (key: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined) delete next[key];
    else next[key] = v;
    onChange(next);
  };
  return (
    <div className="fields">
      {specs.map((spec) => {
        const p = childPath(path, spec.key);
        const v = value[spec.key];
        switch (spec.kind) {
          case 'text':
            return (
              <label key={spec.key}>
                {spec.label}
                <input aria-label={spec.label} data-path={p} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value)} />
              </label>
            );
          case 'textarea':
            return (
              <label key={spec.key}>
                {spec.label}
                <textarea aria-label={spec.label} data-path={p} rows={4} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value)} />
              </label>
            );
          case 'number':
          case 'optional-number':
          case 'nullable-number':
            return (
              <label key={spec.key}>
                {spec.label}
                <input
                  type="number"
                  step="any"
                  aria-label={spec.label}
                  data-path={p}
                  value={typeof v === 'number' ? v : ''}
                  onChange={(e) => {
                    const raw = e.target.value;
                    if (raw === '') set(spec.key, spec.kind === 'nullable-number' ? null : undefined);
                    else set(spec.key, Number(raw));
                  }}
                />
              </label>
            );
          case 'checkbox':
            return (
              <label key={spec.key} className="inline">
                <input type="checkbox" aria-label={spec.label} data-path={p} checked={v === true} onChange={(e) => set(spec.key, e.target.checked)} />
                {spec.label}
              </label>
            );
          case 'list':
            return (
              <div key={spec.key} className="labelled">
                <span>{spec.label}</span>
                <ListInput value={v} path={p} label={spec.label} onChange={(list) => set(spec.key, list)} />
              </div>
            );
          case 'json':
            return (
              <div key={spec.key} className="labelled">
                <span>{spec.label}</span>
                <JsonInput value={v} path={p} label={spec.label} onChange={(json) => set(spec.key, json)} />
              </div>
            );
          case 'select':
            return (
              <label key={spec.key}>
                {spec.label}
                <select aria-label={spec.label} data-path={p} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value === '' ? undefined : e.target.value)}>
                  {(spec.optional || typeof v !== 'string' || !spec.options.includes(v)) && <option value="">—</option>}
                  {spec.options.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              </label>
            );
          case 'object': {
            if (spec.nullable && (v === null || v === undefined)) {
              return (
                <div key={spec.key} className="sub" data-path={p}>
                  <strong>{spec.label}</strong>{' '}
                  <button type="button" className="secondary" onClick={() => set(spec.key, spec.create ? spec.create() : {})}>
                    Add {spec.label.toLowerCase()}
                  </button>
                </div>
              );
            }
            const obj = asObj(v);
            return (
              <fieldset key={spec.key} className="sub" data-path={p} aria-label={spec.label}>
                <legend>{spec.label}</legend>
                <Fields value={obj} specs={spec.fields(obj)} path={p} onChange={(next) => set(spec.key, next)} />
                {spec.nullable && (
                  <button type="button" className="link" onClick={() => set(spec.key, null)}>
                    Remove {spec.label.toLowerCase()}
                  </button>
                )}
              </fieldset>
            );
          }
          case 'array':
            return (
              <div key={spec.key} className="sub">
                <ItemList label={spec.label} items={Array.isArray(v) ? v : []} path={p} item={spec.item} create={spec.create} itemLabel={spec.itemLabel} onChange={(items) => set(spec.key, items)} />
              </div>
            );
          default:
            return null;
        }
      })}
    </div>
  );
}

/** A list of objects, each edited by the same specs, with add, remove and reorder. */
export function ItemList({
  label,
  items,
  path,
  item,
  create,
  itemLabel,
  onChange,
  order,
}: {
  label: string;
  items: unknown[];
  path: string;
  item: (value: Obj) => FieldSpec[];
  create: () => Obj;
  itemLabel: (value: Obj, index: number) => string;
  onChange(items: unknown[]): void;
  /** Display order (indices); paths keep the stored index. */
  order?: number[];
}) {
  const indices = order ?? items.map((_, i) => i);
  const replace = (i: number, next: unknown) => onChange(items.map((x, j) => (j === i ? next : x)));
  return (
    <div className="item-list" data-path={path}>
      <div className="row">
        <strong>{label}</strong>
        <button type="button" className="secondary" onClick={() => onChange([...items, create()])}>
          Add {label.replace(/ies$/, 'y').replace(/s$/, '').toLowerCase()}
        </button>
      </div>
      {indices.map((i) => {
        const obj = asObj(items[i]);
        const name = itemLabel(obj, i);
        return (
          <fieldset key={i} className="item" aria-label={name} data-path={childPath(path, i)}>
            <legend>{name}</legend>
            <Fields value={obj} specs={item(obj)} path={childPath(path, i)} onChange={(next) => replace(i, next)} />
            <div className="row">
              <button type="button" className="link" disabled={i === 0} onClick={() => onChange(items.map((x, j) => (j === i - 1 ? items[i] : j === i ? items[i - 1] : x)))}>
                Move up
              </button>
              <button type="button" className="link" onClick={() => onChange(items.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
    </div>
  );
}
